"""faiss.ccd.Pool: construction, errors, topology, stats, the process's
default pool."""

import time

import faiss
import pytest

from conftest import PARALLEL_MODE_CCD, make_ivf, served, tasks_run


@pytest.mark.parametrize("spec,ccds,workers", [
    ("1x1", 1, 1), ("2x1", 2, 2), ("4x2", 4, 8), ("0;1", 2, 2),
    ("0-1", 1, 2)])
@pytest.mark.parametrize("policy", faiss.ccd.POLICIES)
def test_specs_and_policies(spec, ccds, workers, policy):
    """Every topology form and policy gives the shape it names."""
    pool = faiss.ccd.Pool(spec, policy, monitor=False)
    assert pool.num_ccds == ccds
    assert pool.num_workers == workers
    assert pool.policy == policy
    assert f"{ccds} CCD" in pool.topology()
    assert isinstance(pool.runtime, faiss.CcdRuntime)
    assert f"workers={workers}" in repr(pool)


def test_auto_topology():
    """"auto" finds at least one CCD of one worker on any machine."""
    pool = faiss.ccd.Pool()
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
    (dict(fifo_callers=1), TypeError),
    (dict(fifo_callers=None), TypeError),
])
def test_bad_arguments(kwargs, error):
    """Bad arguments raise TypeError or ValueError with a message, never
    crash ("" is "auto")."""
    if error is None:
        faiss.ccd.Pool(**kwargs)
        return
    with pytest.raises(error) as info:
        faiss.ccd.Pool(**kwargs)
    assert str(info.value)


def test_error_message_names_the_bad_token():
    with pytest.raises(ValueError, match="bogus"):
        faiss.ccd.Pool("0-1;bogus")


def test_stats_after_searches(data):
    """The counters add up (totals = sum over workers = sum over CCDs),
    the ratios are ratios, and the monitor sees the scans' traffic."""
    xb, xq = data
    pool = faiss.ccd.Pool("2x1", "ccd", monitor=True, monitor_period=0.05)
    index = make_ivf("IVF32,Flat", data=data)
    wrapper = faiss.IndexIVFCCD(index, pool.runtime, 5)
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


def test_fifo_callers_answers_as_stock(data):
    """With fifo_callers, searches from more threads than the pool admits
    at once (num_workers + 1 = 3) wait their turn and still answer as
    stock FAISS, every one of them."""
    import threading
    xb, xq = data
    pool = faiss.ccd.Pool("2x1", "ccd", fifo_callers=True)
    index = make_ivf("IVF32,Flat", data=data)
    D_ref, I_ref = index.search(xq, 10)
    params = faiss.SearchParametersIVFCCD(nprobe=8, runtime=pool.runtime)
    before = pool.stats()["callers"]
    wrong, calls = [], 8 * 20

    def client():
        for _ in range(20):
            D, I = index.search(xq, 10, params=params)
            if not ((D == D_ref).all() and (I == I_ref).all()):
                wrong.append(1)

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
    assert pool.stats()["callers"] - before == calls


def test_no_monitor():
    pool = faiss.ccd.Pool("1x1", monitor=False)
    assert pool.stats()["monitor"] is None


def test_many_pools_come_and_go(data):
    """A wrapper holds its pool's runtime: dropping the Python pool while
    the wrapper lives is fine, and both go together."""
    _, xq = data
    index = make_ivf("IVF32,Flat", data=data)
    for policy in faiss.ccd.POLICIES * 3:
        pool = faiss.ccd.Pool("2x1", policy)
        wrapper = faiss.IndexIVFCCD(index, pool.runtime)
        del pool
        wrapper.search(xq[:5], 3)
        del wrapper


def test_default_pool(data, pool):
    """set_default_pool(pool): IVF searches in PARALLEL_MODE_CCD run on it,
    and get_default_pool() is a view of it; None: a fresh pool is made on
    next use; anything else is a TypeError."""
    _, xq = data
    index = make_ivf("IVF32,Flat", data=data)
    index.parallel_mode = PARALLEL_MODE_CCD
    faiss.ccd.set_default_pool(pool)
    before = served(pool)
    index.search(xq, 10)
    assert served(pool) > before
    view = faiss.ccd.get_default_pool()
    assert isinstance(view, faiss.ccd.Pool)
    assert tasks_run(view) == tasks_run(pool)
    assert view.num_workers == pool.num_workers == 2

    faiss.ccd.set_default_pool(None)
    fresh = faiss.ccd.get_default_pool()
    assert served(fresh) == 0, "not a fresh pool"
    before = served(pool)
    index.search(xq, 10)
    assert served(fresh) > 0
    assert served(pool) == before

    for bad in ("2x1", pool.runtime, 0):
        with pytest.raises(TypeError):
            faiss.ccd.set_default_pool(bad)


@pytest.mark.parametrize("mode,error", [
    (7, ValueError), (4, ValueError), (-1, ValueError),
    (PARALLEL_MODE_CCD | 1, ValueError), (1 << 17, ValueError),
    ("ccd", TypeError), (True, TypeError), (2.0, TypeError),
    (None, TypeError)])
def test_default_parallel_mode_inputs(mode, error):
    """set_default_parallel_mode takes 0-3 or PARALLEL_MODE_CCD (optionally
    | NO_HEAP_INIT) and refuses the rest with a clear error, leaving the
    default as it was."""
    assert faiss.ccd.get_default_parallel_mode() == 0
    with pytest.raises(error) as info:
        faiss.ccd.set_default_parallel_mode(mode)
    assert str(info.value)
    assert faiss.ccd.get_default_parallel_mode() == 0
    for good in (PARALLEL_MODE_CCD, 3, PARALLEL_MODE_CCD | 1024, 0):
        faiss.ccd.set_default_parallel_mode(good)
        assert faiss.ccd.get_default_parallel_mode() == good
