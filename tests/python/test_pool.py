"""faiss_ccd.Pool: construction, errors, topology, stats."""

import time

import pytest

import faiss_ccd
from conftest import make_ivf


@pytest.mark.parametrize("spec,ccds,workers", [
    ("1x1", 1, 1), ("2x1", 2, 2), ("4x2", 4, 8), ("0;1", 2, 2),
    ("0-1", 1, 2)])
@pytest.mark.parametrize("policy", faiss_ccd.POLICIES)
def test_specs_and_policies(spec, ccds, workers, policy):
    pool = faiss_ccd.Pool(spec, policy, monitor=False)
    assert pool.num_ccds == ccds
    assert pool.num_workers == workers
    assert pool.policy == policy
    assert f"{ccds} CCD" in pool.topology()


def test_auto_topology():
    pool = faiss_ccd.Pool()
    assert pool.num_workers >= 1
    assert pool.num_ccds >= 1
    assert isinstance(pool.topology(), str) and pool.topology()


@pytest.mark.parametrize("kwargs,error", [
    (dict(topology="bogus"), ValueError),
    (dict(topology="0x2"), ValueError),
    (dict(topology=""), None),
    (dict(topology=4), TypeError),
    (dict(policy="fast"), ValueError),
    (dict(policy=None), TypeError),
    (dict(monitor="yes"), TypeError),
    (dict(monitor_period=0), ValueError),
    (dict(monitor_period="0.5"), TypeError),
    (dict(monitor_period=float("nan")), ValueError),
    (dict(monitor_period=-1.0), ValueError),
])
def test_bad_arguments(kwargs, error):
    if error is None:
        faiss_ccd.Pool(**kwargs)
        return
    with pytest.raises(error) as info:
        faiss_ccd.Pool(**kwargs)
    assert str(info.value)


def test_error_message_names_the_bad_token():
    with pytest.raises(ValueError, match="bogus"):
        faiss_ccd.Pool("0-1;bogus")


def test_stats_after_searches(data):
    xb, xq = data
    pool = faiss_ccd.Pool("2x1", "ccd", monitor=True, monitor_period=0.05)
    index = make_ivf("IVF32,Flat", data=data)
    wrapper = faiss_ccd.IndexIVFCCD(index, pool, table_id=5)
    before = pool.stats()
    wrapper.search(xq, 10)
    pool.wait_idle()
    stats = pool.stats()
    assert stats["tasks_run"] > before["tasks_run"]
    assert stats["num_workers"] == 2 and stats["num_ccds"] == 2
    assert len(stats["workers"]) == 2
    for key in ("tasks_run", "local_pops", "intra_ccd_steals",
                "cross_ccd_steals", "parks"):
        assert stats[key] == sum(w[key] for w in stats["workers"]), key
    assert sum(stats["tasks_run_per_ccd"]) == stats["tasks_run"]
    assert 0 <= stats["cross_ccd_steal_ratio"] <= 1
    assert 0 <= stats["steal_ratio"] <= 1
    assert stats["epoch"] >= 0
    # The monitor drains what the scans recorded within a few periods.
    deadline = time.monotonic() + 20
    while pool.stats()["monitor"]["records"] == 0:
        assert time.monotonic() < deadline, "monitor never drained"
        time.sleep(0.05)
    monitor = pool.stats()["monitor"]
    assert len(monitor["ccd_traffic"]) == 2
    assert monitor["slow_bytes"] > 0


def test_no_monitor():
    pool = faiss_ccd.Pool("1x1", monitor=False)
    assert pool.stats()["monitor"] is None


def test_many_pools_come_and_go(data):
    _, xq = data
    index = make_ivf("IVF32,Flat", data=data)
    for policy in faiss_ccd.POLICIES * 3:
        pool = faiss_ccd.Pool("2x1", policy)
        faiss_ccd.IndexIVFCCD(index, pool).search(xq[:5], 3)
        del pool  # the wrapper held it; both go here
