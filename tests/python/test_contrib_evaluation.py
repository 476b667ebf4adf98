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
