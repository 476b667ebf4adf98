"""Accuracy and latency figures, in the conventions of FAISS's benchmarks.

    recall_at(I, gt, r)          R@r as bench_all_ivf.py prints it: the
                                 share of queries whose true nearest
                                 neighbor is among the first r results
    intersection_recall(I, gt)   |results & true k-NN| / (nq k), through
                                 faiss.contrib.evaluation
    percentiles(latencies_s)     {"p50_ms", "p99_ms", "p999_ms"}
    summary(latencies_s, wall_s, queries)   QPS and ms per query beside them
    latency_ccdf(latencies_s)    a latency distribution small enough to keep
                                 in a report and plot (tail included)
    pool_counters(pool)          a faiss.ccd.Pool's task and steal counters,
                                 to subtract around a measurement
    combine_rounds(measured)     one contender's rounds in one scenario:
                                 median QPS, pooled percentiles, counters
"""

import numpy as np

from faiss.contrib.evaluation import knn_intersection_measure

PERCENTILES = (("p50_ms", 50.0), ("p99_ms", 99.0), ("p999_ms", 99.9))

# The most points latency_ccdf gives: far more than a plot shows.
MAX_CCDF_POINTS = 10000


def _int(name, v):
    """v, an int (not a bool), or a TypeError naming it."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {v!r}")
    return int(v)


def _latencies(latencies_s):
    """latencies_s as a flat float array, or a TypeError naming it."""
    try:
        lat = np.asarray(latencies_s, dtype=float)
    except (TypeError, ValueError):
        lat = None
    if lat is None or lat.ndim == 0:
        raise TypeError(f"latencies_s must be a sequence of seconds, got "
                        f"{type(latencies_s).__name__}")
    return lat.ravel()


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
    r = _int("rank r", r)
    if r < 1 or r > I.shape[1]:
        raise ValueError(f"rank {r} outside the {I.shape[1]} results")
    return float((I[:, :r] == gt[:, :1]).any(axis=1).mean())


def intersection_recall(I, gt, k=None):
    """k-recall at k: |I[:, :k] & gt[:, :k]| / (nq k)."""
    I, gt = _check_results(I, gt)
    k = min(I.shape[1], gt.shape[1]) if k is None else _int("k", k)
    if k < 1 or k > I.shape[1] or k > gt.shape[1]:
        raise ValueError(f"k={k} outside results ({I.shape[1]}) or ground "
                         f"truth ({gt.shape[1]})")
    return float(knn_intersection_measure(I[:, :k], gt[:, :k]))


def percentiles(latencies_s):
    """P50, P99 and P999 in milliseconds (linear interpolation between
    samples, numpy's default). NaN for an empty sample."""
    lat = _latencies(latencies_s)
    if lat.size == 0:
        return {name: float("nan") for name, _ in PERCENTILES}
    return {name: float(np.percentile(lat, q) * 1e3)
            for name, q in PERCENTILES}


def summary(latencies_s, wall_s, queries):
    """QPS (queries / wall), ms per query (wall / queries, as
    bench_all_ivf.py reports it) and the percentiles of the latencies."""
    if isinstance(wall_s, bool) or not isinstance(
            wall_s, (int, float, np.integer, np.floating)):
        raise TypeError(f"wall time wall_s must be a number, got {wall_s!r}")
    if not np.isfinite(wall_s) or wall_s <= 0:
        raise ValueError(f"wall time must be positive and finite, got "
                         f"{wall_s}")
    if _int("queries", queries) < 0:
        raise ValueError(f"queries must be >= 0, got {queries}")
    out = {"qps": queries / wall_s,
           "ms_per_query": 1e3 * wall_s / queries if queries else
           float("nan")}
    out.update(percentiles(latencies_s))
    return out


def latency_ccdf(latencies_s, points=64):
    """A latency distribution in `points` pairs, for a report to keep and
    plot on log axes: {"ms": latencies in milliseconds, "slower": the share
    of calls slower than each}, the shares log-spaced from 1 down to
    1 / len(latencies_s), so the tail gets as many points as the body.
    Empty lists for no latencies."""
    lat = _latencies(latencies_s)
    if not 2 <= _int("points", points) <= MAX_CCDF_POINTS:
        raise ValueError(f"points must be from 2 to {MAX_CCDF_POINTS}, got "
                         f"{points}")
    if lat.size == 0:
        return {"ms": [], "slower": []}
    slower = np.logspace(0, -np.log10(lat.size), points) \
        if lat.size > 1 else np.ones(1)
    ms = np.quantile(lat, 1 - slower) * 1e3
    return {"ms": [float(f"{v:.6g}") for v in ms],
            "slower": [float(f"{v:.6g}") for v in slower]}


def pool_counters(pool):
    """(tasks run, steals inside a CCD, steals across CCDs) of a
    faiss.ccd.Pool so far: subtract two readings to count what ran
    between them."""
    if not callable(getattr(pool, "stats", None)):
        raise TypeError(f"pool must be a faiss.ccd.Pool, got {pool!r}")
    s = pool.stats()
    return np.array([s["tasks_run"], s["intra_ccd_steals"],
                     s["cross_ccd_steals"]], dtype=np.int64)


def pair_ratios(a, b):
    """Two contenders measured in the same rounds (combine_rounds rows,
    or lists of per-round QPS): the ratio a/b of each round's pair, as
    {"median", "min", "max", "pairs"}. A ratio of pairs, not of medians:
    each pair ran back to back, so a slow spell of the machine moves both
    sides of it."""
    a = a["qps_rounds"] if isinstance(a, dict) else a
    b = b["qps_rounds"] if isinstance(b, dict) else b
    if len(a) != len(b) or not a:
        raise ValueError(f"pair_ratios: {len(a)} and {len(b)} rounds; "
                         "pairs need the same rounds, at least one")
    r = [x / y if y > 0 else float("nan") for x, y in zip(a, b)]
    return {"median": float(np.median(r)), "min": float(min(r)),
            "max": float(max(r)), "pairs": len(r)}


def combine_rounds(measured):
    """Rounds of one contender in one scenario, each (loadgen.Run, pool
    counters over the run or None): the median round's QPS, percentiles of
    all latencies pooled (more samples for the tail) and their
    distribution (latency_ccdf), the counters summed with the cross-CCD
    share of the steals."""
    measured = list(measured)
    if not measured:
        raise ValueError("no rounds to combine: give at least one round, "
                         "(run, counters)")
    if not all(isinstance(m, (tuple, list)) and len(m) == 2
               for m in measured):
        raise TypeError("each round must be a pair (run, counters or None)")
    runs = [r for r, _ in measured]
    lat = np.concatenate([r.latencies_s for r in runs])
    row = {"qps": float(np.median([r.qps for r in runs])),
           "qps_rounds": [float(r.qps) for r in runs],
           "queries": int(sum(r.queries for r in runs))}
    row["ms_per_query"] = 1e3 / row["qps"] if row["qps"] else float("nan")
    row.update(percentiles(lat))
    row["latency_ccdf"] = latency_ccdf(lat)
    counts = [c for _, c in measured if c is not None]
    if counts:
        tasks, intra, cross = (int(x) for x in sum(counts))
        row.update(tasks_run=tasks, intra_ccd_steals=intra,
                   cross_ccd_steals=cross,
                   cross_ccd_steal_ratio=cross / (intra + cross)
                   if intra + cross else None)
    return row
