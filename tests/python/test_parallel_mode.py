"""index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD on stock indexes."""

import threading
import time

import faiss
import numpy as np
import pytest

import faiss_ccd
from conftest import assert_same_results, cached_ivf, make_ivf


@pytest.fixture
def default_pool(pool):
    faiss_ccd.set_default_pool(pool)
    yield pool
    faiss_ccd.set_default_pool(None)


def cpp_mode(index):
    """The C++ field, read past faiss_ccd's property."""
    return faiss.swigfaiss._swigfaiss.IndexIVF_parallel_mode_get(index)


def tasks_run(pool):
    pool.wait_idle()
    return pool.stats()["tasks_run"]


@pytest.mark.parametrize("description", ["IVF32,Flat", "IVF32,PQ8x4",
                                         "IVF32,SQ8"])
@pytest.mark.parametrize("metric", [faiss.METRIC_L2,
                                    faiss.METRIC_INNER_PRODUCT])
def test_mode_on_and_off(data, default_pool, description, metric):
    _, xq = data
    index = make_ivf(description, metric, data=data)
    assert index.parallel_mode == 0
    D_ref, I_ref = index.search(xq, 10)
    lims_ref, _, _ = index.range_search(xq, float(np.median(D_ref[:, 5])))

    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    assert index.parallel_mode == faiss_ccd.PARALLEL_MODE_CCD
    before = tasks_run(default_pool)
    D, I = index.search(xq, 10)
    assert tasks_run(default_pool) > before, "did not run on the pool"
    assert_same_results(D_ref, I_ref, D, I)
    before = tasks_run(default_pool)
    lims, _, _ = index.range_search(xq, float(np.median(D_ref[:, 5])))
    assert tasks_run(default_pool) > before
    np.testing.assert_array_equal(lims, lims_ref)

    index.parallel_mode = 0
    assert index.parallel_mode == 0
    before = tasks_run(default_pool)
    assert_same_results(D_ref, I_ref, *index.search(xq, 10))
    assert tasks_run(default_pool) == before, "stock search used the pool"


def test_faiss_modes_are_untouched(data, default_pool):
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    D_ref, I_ref = index.search(xq, 10)
    for mode in (1, 2, 3, 0):
        index.parallel_mode = mode
        assert index.parallel_mode == mode
        before = tasks_run(default_pool)
        assert_same_results(D_ref, I_ref, *index.search(xq, 10))
        assert tasks_run(default_pool) == before
    # The C++ field never holds our mode: FAISS 1.7.3 aborts on modes it
    # does not know when C++ code searches the index.
    index.parallel_mode = 2
    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    assert cpp_mode(index) == 2
    index.parallel_mode = 0
    assert cpp_mode(index) == 0


def test_cpp_callers_still_work(data, default_pool):
    """An IndexIDMap2 over an IVF in the mode: its C++ search of the IVF
    runs FAISS's own search, unharmed."""
    xb, xq = data
    ids = np.arange(len(xb), dtype=np.int64) * 3
    idmap = faiss.IndexIDMap2(faiss.index_factory(xb.shape[1], "IVF32,Flat"))
    idmap.train(xb)
    idmap.add_with_ids(xb, ids)
    inner = faiss.downcast_index(idmap.index)
    inner.nprobe = 8
    D_ref, I_ref = idmap.search(xq, 5)
    inner.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    assert_same_results(D_ref, I_ref, *idmap.search(xq, 5))


def test_default_pool_can_change(data, pool):
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    D_ref, I_ref = index.search(xq, 10)
    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    try:
        for p in (pool, faiss_ccd.Pool("1x1", "rr"), pool):
            faiss_ccd.set_default_pool(p)
            before = tasks_run(p)
            assert_same_results(D_ref, I_ref, *index.search(xq, 10))
            assert tasks_run(p) > before
        faiss_ccd.set_default_pool(None)
        assert_same_results(D_ref, I_ref, *index.search(xq, 10))
        assert faiss_ccd.get_default_pool() is not pool
    finally:
        index.parallel_mode = 0
        faiss_ccd.set_default_pool(None)
    with pytest.raises(TypeError):
        faiss_ccd.set_default_pool("2x1")


def test_default_pool_replaced_while_searching(data):
    """Threads search in the mode while the main thread keeps replacing the
    default pool: every search finishes on the pool it started with."""
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    index.nprobe = 8
    D_ref, I_ref = index.search(xq, 10)
    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    stop = threading.Event()
    errors = []

    def client():
        try:
            while not stop.is_set():
                assert_same_results(D_ref, I_ref, *index.search(xq, 10))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=client) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        for i in range(30):
            faiss_ccd.set_default_pool(
                faiss_ccd.Pool("2x1", faiss_ccd.POLICIES[i % 3]))
            time.sleep(0.005)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)
        index.parallel_mode = 0
        faiss_ccd.set_default_pool(None)
    assert not errors, errors[0]


def test_fallbacks_equal_faiss(data, default_pool):
    xb, xq = data
    # Empty index: FAISS's answer (-1 labels), not an error.
    empty = faiss.index_factory(xb.shape[1], "IVF32,Flat")
    empty.train(xb)
    D_ref, I_ref = empty.search(xq, 5)
    empty.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    D, I = empty.search(xq, 5)
    np.testing.assert_array_equal(I, I_ref)
    assert (I == -1).all()
    # FastScan.
    fs = cached_ivf("IVF32,PQ8x4fs")
    D_ref, I_ref = fs.search(xq, 10)
    fs.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    assert_same_results(D_ref, I_ref, *fs.search(xq, 10))
    fs.parallel_mode = 0
    # IDSelector in the params.
    index = cached_ivf("IVF32,Flat")
    params = faiss.SearchParametersIVF()
    params.nprobe = 8
    sel = faiss.IDSelectorRange(0, 1000)
    params.sel = sel
    D_ref, I_ref = index.search(xq, 10, params=params)
    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    try:
        D, I = index.search(xq, 10, params=params)
        assert_same_results(D_ref, I_ref, D, I)
        assert ((I >= 0) & (I < 1000) | (I == -1)).all()
    finally:
        index.parallel_mode = 0


def test_other_index_types_unchanged(data, default_pool, hnsw):
    xb, xq = data
    flat = faiss.IndexFlatL2(xb.shape[1])
    flat.add(xb)
    before = tasks_run(default_pool)
    flat.search(xq, 5)
    hnsw.search(xq, 5)
    assert tasks_run(default_pool) == before
    assert not hasattr(flat, "parallel_mode")


def test_mode_inputs(data, default_pool):
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    D_ref, I_ref = index.search(xq, 10)
    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    try:
        # Like FAISS's own search, the mode converts what it can...
        assert_same_results(D_ref, I_ref,
                            *index.search(xq.astype(np.float64), 10))
        assert_same_results(D_ref[:3], I_ref[:3],
                            *index.search(xq[:3].tolist(), 10))
        # ...and says what it cannot.
        with pytest.raises(ValueError):
            index.search(xq[:, :5], 10)
        with pytest.raises(ValueError):
            index.search(xq, 0)
        with pytest.raises(TypeError):
            index.parallel_mode = "ccd"
        # Values FAISS 1.7.3 would take and then abort the process on.
        for bad in (4, 5, -1, faiss_ccd.PARALLEL_MODE_CCD | 1024, 1 << 17):
            with pytest.raises(ValueError):
                index.parallel_mode = bad
        assert index.parallel_mode == faiss_ccd.PARALLEL_MODE_CCD
        assert_same_results(D_ref, I_ref, *index.search(xq, 10))
        index.parallel_mode = 1024  # NO_HEAP_INIT alone is FAISS's
        assert index.parallel_mode == 1024
    finally:
        index.parallel_mode = 0
