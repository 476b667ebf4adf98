"""Accuracy and latency figures, in the conventions of FAISS's benchmarks.

    recall_at(I, gt, r)          R@r as bench_all_ivf.py prints it: the
                                 share of queries whose true nearest
                                 neighbor is among the first r results
    intersection_recall(I, gt)   |results & true k-NN| / (nq k), through
                                 faiss.contrib.evaluation
    percentiles(latencies_s)     {"p50_ms", "p99_ms", "p999_ms"}
    summary(latencies_s, wall_s, queries)   QPS and ms per query beside them
"""

import numpy as np

from faiss.contrib.evaluation import knn_intersection_measure

PERCENTILES = (("p50_ms", 50.0), ("p99_ms", 99.0), ("p999_ms", 99.9))


def _check_results(I, gt):
    I, gt = np.asarray(I), np.asarray(gt)
    if I.ndim != 2 or gt.ndim != 2:
        raise ValueError(f"results and ground truth must be 2-d, got "
                         f"{I.shape} and {gt.shape}")
    if len(I) != len(gt):
        raise ValueError(f"{len(I)} result rows for {len(gt)} queries of "
                         "ground truth")
    if len(I) == 0:
        raise ValueError("no queries")
    return I, gt


def recall_at(I, gt, r):
    """1-recall at rank r: the share of queries whose true nearest
    neighbor gt[:, 0] is in I[:, :r]. r may exceed I's width only if it
    is not asked for: asking R@100 of k=10 results is an error."""
    I, gt = _check_results(I, gt)
    if r < 1 or r > I.shape[1]:
        raise ValueError(f"rank {r} outside the {I.shape[1]} results")
    return float((I[:, :r] == gt[:, :1]).any(axis=1).mean())


def intersection_recall(I, gt, k=None):
    """k-recall at k: |I[:, :k] & gt[:, :k]| / (nq k)."""
    I, gt = _check_results(I, gt)
    k = min(I.shape[1], gt.shape[1]) if k is None else k
    if k < 1 or k > I.shape[1] or k > gt.shape[1]:
        raise ValueError(f"k={k} outside results ({I.shape[1]}) or ground "
                         f"truth ({gt.shape[1]})")
    return float(knn_intersection_measure(I[:, :k], gt[:, :k]))


def percentiles(latencies_s):
    """P50, P99 and P999 in milliseconds (linear interpolation between
    samples, numpy's default). NaN for an empty sample."""
    lat = np.asarray(latencies_s, dtype=float)
    if lat.size == 0:
        return {name: float("nan") for name, _ in PERCENTILES}
    return {name: float(np.percentile(lat, q) * 1e3)
            for name, q in PERCENTILES}


def summary(latencies_s, wall_s, queries):
    """QPS (queries / wall), ms per query (wall / queries, as
    bench_all_ivf.py reports it) and the percentiles of the latencies."""
    if wall_s <= 0:
        raise ValueError(f"wall time must be positive, got {wall_s}")
    out = {"qps": queries / wall_s,
           "ms_per_query": 1e3 * wall_s / queries if queries else
           float("nan")}
    out.update(percentiles(latencies_s))
    return out
