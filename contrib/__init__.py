"""faiss.contrib.ccd: data sets, evaluation, load generators and reports
for benchmarking FAISS's parallel modes, faiss-ccd's CCD mode among them.

Installed with the fork's Python package beside FAISS's own faiss.contrib
modules, on which it builds (Dataset, vecs_io, knn_intersection_measure):

    from faiss.contrib.ccd import datasets, evaluation, loadgen, report

    ds = datasets.by_name("fmnist")             # or sift1m:DIR, hdf5:FILE...
    gt = ds.get_groundtruth(100)                 # exact, cached on disk
    run = loadgen.closed_loop(search, ds.get_queries(), clients=8,
                              duration_s=2.0)
    print(run.qps, evaluation.percentiles(run.latencies_s))

The benchmarks in benchs/python/ are written with it; their JSON goes
through report.finish() into markdown and PNG. `peer` (imported on its
own) runs another faiss, the faiss-cpu wheel, in a second process whose
turns alternate with this one's.
"""

from . import datasets, evaluation, loadgen, report

__all__ = ["datasets", "evaluation", "loadgen", "report"]
