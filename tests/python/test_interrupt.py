"""Python's interrupt callback (patch 0005): threads Python does not know
are answered without entering Python, and the thread that called search
still stops at a signal.

Each case runs in a fresh interpreter with OMP_NUM_THREADS=1, so that
parallel mode 0 scans every query in the calling thread, in order. A
SIGALRM handler raises KeyboardInterrupt 0.2 s into a search whose answer
arrays start as a sentinel: interrupted in time, the search stops asking
for more queries and leaves the last rows as they were; a callback that
never asked would fill every row (and raise only after the search
returned).
"""

import json
import os
import subprocess
import sys

import pytest

CHILD = r"""
import json, signal, sys
import numpy as np
import faiss

mode = sys.argv[1]
rs = np.random.RandomState(3)
xb = rs.rand(60000, 32).astype("float32")
index = faiss.index_factory(32, "IVF64,Flat")
index.train(xb[:10000])
index.add(xb)
index.nprobe = 64
index.parallel_mode = faiss.PARALLEL_MODE_CCD if mode == "ccd" else int(mode)
xq = rs.rand(40000, 32).astype("float32")
D = np.full((len(xq), 10), -7.0, dtype="float32")
I = np.full((len(xq), 10), -7, dtype="int64")

def stop(*args):
    raise KeyboardInterrupt()

signal.signal(signal.SIGALRM, stop)
signal.setitimer(signal.ITIMER_REAL, 0.2)
raised = None
try:
    index.search(xq, 10, D=D, I=I)
except BaseException as e:
    raised = type(e).__name__
signal.setitimer(signal.ITIMER_REAL, 0)
print(json.dumps({"raised": raised,
                  "last_row_untouched": bool((I[-1] == -7).all())}))
"""


@pytest.mark.parametrize("mode", ["0", "ccd"])
def test_a_signal_stops_the_callers_search(mode):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, mode], env=env,
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["raised"] == "KeyboardInterrupt", got
    # Mode 0 asks after each query, the CCD mode after each slice of
    # queries (faiss/ivf_ccd/KnnScan.cpp's knn_scans), both in this thread. With the
    # callback cleared this fails: every row is filled.
    assert got["last_row_untouched"], got
