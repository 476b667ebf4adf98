"""faiss.contrib.ccd.evaluation against figures worked out by hand."""

import numpy as np
import pytest

from faiss.contrib.ccd import evaluation


def test_recall_at_counts_the_true_nearest_neighbor():
    gt = np.array([[4, 9], [7, 1], [2, 3], [5, 6]])
    I = np.array([[4, 0, 1],      # found at rank 1
                  [0, 7, 1],      # rank 2
                  [0, 1, 2],      # rank 3
                  [0, 1, 3]])     # not found
    assert evaluation.recall_at(I, gt, 1) == 0.25
    assert evaluation.recall_at(I, gt, 2) == 0.5
    assert evaluation.recall_at(I, gt, 3) == 0.75
    with pytest.raises(ValueError, match="rank 4"):
        evaluation.recall_at(I, gt, 4)
    with pytest.raises(ValueError, match="rows"):
        evaluation.recall_at(I[:3], gt, 1)


def test_intersection_recall():
    gt = np.array([[1, 2, 3], [4, 5, 6]])
    I = np.array([[3, 2, 9], [7, 8, 9]])
    assert evaluation.intersection_recall(I, gt) == pytest.approx(2 / 6)
    assert evaluation.intersection_recall(I, gt, 1) == 0.0
    with pytest.raises(ValueError):
        evaluation.intersection_recall(I, gt, 4)


def test_percentiles_and_summary():
    lat = np.arange(1, 1001) * 1e-3            # 1 .. 1000 ms
    p = evaluation.percentiles(lat)
    # numpy's linear interpolation: rank q/100 * (n - 1) from 0.
    assert p["p50_ms"] == pytest.approx(500.5)
    assert p["p99_ms"] == pytest.approx(990.01)
    assert p["p999_ms"] == pytest.approx(999.001)
    assert all(np.isnan(v) for v in evaluation.percentiles([]).values())
    s = evaluation.summary(lat, wall_s=2.0, queries=4000)
    assert s["qps"] == 2000 and s["ms_per_query"] == 0.5
    with pytest.raises(ValueError, match="wall"):
        evaluation.summary(lat, 0, 1)


def test_latency_ccdf_spans_body_and_tail():
    lat = np.arange(1, 1001) * 1e-3             # 1..1000 ms
    c = evaluation.latency_ccdf(lat, points=31)
    assert len(c["ms"]) == len(c["slower"]) == 31
    assert c["slower"][0] == 1.0 and c["slower"][-1] == pytest.approx(1e-3)
    assert c["ms"][0] == pytest.approx(1.0)
    assert np.all(np.diff(c["ms"]) >= 0) and np.all(np.diff(c["slower"]) < 0)
    # The median point: about half the calls are slower than ~500 ms.
    i = int(np.argmin(np.abs(np.array(c["slower"]) - 0.5)))
    assert c["ms"][i] == pytest.approx(1000 * (1 - c["slower"][i]), rel=0.01)
    assert evaluation.latency_ccdf([]) == {"ms": [], "slower": []}
    assert evaluation.latency_ccdf([0.002]) == {"ms": [2.0], "slower": [1.0]}
    with pytest.raises(ValueError):
        evaluation.latency_ccdf(lat, points=1)


class FakeRun:
    def __init__(self, qps, latencies_s):
        self.qps, self.latencies_s = qps, np.asarray(latencies_s)
        self.queries = len(self.latencies_s)


def test_combine_rounds_median_qps_pooled_latencies_summed_counters():
    measured = [(FakeRun(100, [0.001] * 10), np.array([10, 3, 1])),
                (FakeRun(300, [0.002] * 10), np.array([20, 5, 3])),
                (FakeRun(200, [0.003] * 10), None)]   # a stock round
    row = evaluation.combine_rounds(measured)
    assert row["qps"] == 200 and row["queries"] == 30
    assert row["ms_per_query"] == pytest.approx(5.0)
    assert row["p50_ms"] == pytest.approx(2.0)
    assert row["p999_ms"] == pytest.approx(3.0)
    assert (row["tasks_run"], row["intra_ccd_steals"],
            row["cross_ccd_steals"]) == (30, 8, 4)
    assert row["cross_ccd_steal_ratio"] == pytest.approx(4 / 12)
    row = evaluation.combine_rounds([(FakeRun(1, [0.001]), None)])
    assert "tasks_run" not in row


def test_pool_counters_count_what_ran_between_two_readings():
    import faiss
    pool = faiss.ccd.Pool("2x1", monitor=False)
    index = faiss.index_factory(8, "IVF4,Flat")
    xb = np.random.RandomState(0).rand(400, 8).astype("float32")
    index.train(xb)
    index.add(xb)
    params = faiss.SearchParametersIVFCCD(nprobe=4, runtime=pool.runtime,
                                          helpers=1)
    before = evaluation.pool_counters(pool)
    index.search(xb[:1], 5, params=params)
    pool.wait_idle()
    tasks, intra, cross = evaluation.pool_counters(pool) - before
    assert tasks >= 1 and intra >= 0 and cross >= 0

