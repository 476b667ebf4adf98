"""Write the IVF list sizes (and how often the data set's own queries probe
each list) that bench_sim reads, from real indexes built with the fork's
Python module. Single-threaded and small on purpose; output a few KB:

    OMP_NUM_THREADS=1 PYTHONPATH=<build>/python \\
        PYTHONPATH=build/python .venv/bin/python tools/scale_model/make_list_sizes.py [synthetic] [fmnist]

File format (tools/scale_model/data/<name>.lists): '#' comment lines (what was
built, how), then a header line "d nlist nprobe", then one line per list:
"size probes" (vectors in the list; probes of it by the queries).
"""

import pathlib
import sys
import time

import numpy as np

import faiss
from faiss.contrib.ccd import datasets

OUT = pathlib.Path(__file__).resolve().parent / "data"

CONFIGS = {
    # benchs/python/bench_headline.py's default synthetic IVF at the paper's
    # scale: 500K x 128 (by_name("synthetic")), IVF1024, nprobe 32.
    "synthetic": ("synthetic", 1024, 32, 100000),
    # Fashion-MNIST as bench_headline.py indexes it: IVF256, nprobe 8.
    "fmnist": ("fmnist", 256, 8, 60000),
}


def build(name):
    spec, nlist, nprobe, ntrain = CONFIGS[name]
    t0 = time.time()
    ds = datasets.by_name(spec)
    xb = ds.get_database()
    xq = ds.get_queries()
    d = xb.shape[1]
    rs = np.random.RandomState(123)
    train = xb[rs.choice(len(xb), min(ntrain, len(xb)), replace=False)]
    km = faiss.Kmeans(d, nlist, niter=10, seed=123)
    km.train(np.ascontiguousarray(train, dtype="float32"))
    index = faiss.IndexFlatL2(d)
    index.add(km.centroids)
    _, assign = index.search(np.ascontiguousarray(xb, dtype="float32"), 1)
    sizes = np.bincount(assign.ravel(), minlength=nlist)
    _, probes = index.search(np.ascontiguousarray(xq, dtype="float32"),
                             nprobe)
    counts = np.bincount(probes.ravel(), minlength=nlist)
    lines = [f"# {name}: {ds} ({len(xb)} x {d}), IVF{nlist} trained by "
             f"faiss.Kmeans (niter 10, seed 123) on {len(train)} vectors;",
             f"# probes: the data set's {len(xq)} queries, nprobe {nprobe}.",
             f"# written by tools/scale_model/make_list_sizes.py in "
             f"{time.time() - t0:.0f} s",
             f"{d} {nlist} {nprobe}"]
    lines += [f"{s} {c}" for s, c in zip(sizes, counts)]
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{name}.lists"
    path.write_text("\n".join(lines) + "\n")
    print(f"{path}: sizes min {sizes.min()} mean {sizes.mean():.0f} "
          f"max {sizes.max()}")


if __name__ == "__main__":
    for n in sys.argv[1:] or list(CONFIGS):
        build(n)
