"""Issue 28, 4: memory given back after large batches. Rounds of one
200,000-query IVF batch leave the CCD mode's process at most 16 MB above
parallel_mode 0's after the same rounds, and not growing from round to
round. Each mode runs in a fresh process of its own (RSS of one process
says nothing about another mode's leftovers), on the same data."""

import json
import os
import subprocess
import sys

import pytest

ROUNDS = 4
CHILD = r"""
import json, resource, sys
import numpy as np
import faiss

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20

mode = int(sys.argv[1])
rs = np.random.RandomState(123)
xb = rs.rand(20000, 16).astype("float32")
xq = rs.rand(200000, 16).astype("float32")
index = faiss.index_factory(16, "IVF64,Flat")
index.train(xb)
index.add(xb)
index.nprobe = 4
index.parallel_mode = mode
index.search(xq[:2000], 10)          # warm: pools, scanners, lazy state
warm = rss_mb()
after = []
for _ in range(int(sys.argv[2])):
    D, I = index.search(xq, 10)
    del D, I
    after.append(rss_mb() - warm)
print(json.dumps(after))
"""


def rounds(mode):
    env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count()))
    out = subprocess.run([sys.executable, "-c", CHILD, str(mode),
                          str(ROUNDS)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(os.environ.get("FAISS_CCD_UNDER_ASAN") == "1",
                    reason="ASan's quarantine keeps freed memory by design")
def test_ccd_batches_give_memory_back():
    import faiss
    stock = rounds(0)
    ccd = rounds(faiss.PARALLEL_MODE_CCD)
    kept = [c - s for c, s in zip(ccd, stock)]
    assert max(kept) <= 16, (
        f"MB above warm after each round: ccd {ccd}, mode 0 {stock}")
    assert ccd[-1] - ccd[0] <= 4, f"the CCD mode grows: {ccd} MB"
