"""IndexIVF.parallel_mode = faiss.PARALLEL_MODE_CCD: the issue's acceptance
test.

The mode is the C++ field of the IVF index itself, so it holds wherever
libfaiss searches that index (the ways of holding one, and the default
mode: test_parallel_mode_wrappers.py). A search of the plain index in the
mode:
  - answers as parallel_mode 0 of the same build (same distances, same
    labels except among exact ties), and
  - runs on the pool: the default pool's callers (searches it served,
    whether the calling thread scanned alone or with helpers) go up.
Bad modes raise RuntimeError at search time (FAISS 1.7.3 would abort inside
an OpenMP region); FAISS's own modes 0-3 and PARALLEL_MODE_NO_HEAP_INIT
behave as before.
"""

import json
import pickle
import textwrap
import threading
import time

import faiss
import numpy as np
import pytest

from conftest import (PARALLEL_MODE_CCD, assert_same_range_results,
                      assert_same_results, cached_ivf, ivf_of, make_ivf,
                      run_python, served, tasks_run)


# ------------------------------------------------------ the plain index

@pytest.mark.parametrize("description", ["IVF32,Flat", "IVF32,PQ8x4",
                                         "IVF32,SQ8"])
@pytest.mark.parametrize("metric", [faiss.METRIC_L2,
                                    faiss.METRIC_INNER_PRODUCT])
def test_mode_on_and_off(data, default_pool, description, metric):
    """search and range_search in the mode equal mode 0 and run on the
    default pool; back in mode 0, the pool is not used."""
    _, xq = data
    index = make_ivf(description, metric, data=data)
    assert index.parallel_mode == 0
    D_ref, I_ref = index.search(xq, 10)
    radius = float(np.median(D_ref[:, 5]))
    range_ref = index.range_search(xq, radius)

    index.parallel_mode = PARALLEL_MODE_CCD
    assert index.parallel_mode == PARALLEL_MODE_CCD
    before = served(default_pool)
    D, I = index.search(xq, 10)
    assert served(default_pool) > before, "did not run on the pool"
    assert_same_results(D_ref, I_ref, D, I)
    before = served(default_pool)
    assert_same_range_results(range_ref, index.range_search(xq, radius))
    assert served(default_pool) > before

    index.parallel_mode = 0
    assert index.parallel_mode == 0
    before = served(default_pool)
    assert_same_results(D_ref, I_ref, *index.search(xq, 10))
    assert served(default_pool) == before, "stock search used the pool"


def test_faiss_modes_are_untouched(data, default_pool):
    """FAISS's modes 0-3, with two OpenMP threads so that they really
    parallelize: the field holds exactly what was set, the answers are
    mode 0's, and the pool runs nothing."""
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    D_ref, I_ref = index.search(xq, 10)
    radius = float(np.median(D_ref[:, 5]))
    range_ref = index.range_search(xq, radius)
    faiss.omp_set_num_threads(2)
    try:
        for mode in (1, 2, 3, 0):
            index.parallel_mode = mode
            assert index.parallel_mode == mode
            assert ivf_of(index).parallel_mode == mode  # another proxy
            before = served(default_pool)
            assert_same_results(D_ref, I_ref, *index.search(xq, 10))
            if mode != 3:  # FAISS's range search has no mode 3: it raises
                assert_same_range_results(range_ref,
                                          index.range_search(xq, radius))
            assert served(default_pool) == before
    finally:
        faiss.omp_set_num_threads(1)


def test_range_search_in_mode_3_does_not_abort():
    """range_search with FAISS's mode 3 must answer (as mode 0) or raise a
    RuntimeError; run in a child, since FAISS 1.7.3 itself aborts there."""
    code = textwrap.dedent("""
        import faiss, numpy as np
        rs = np.random.RandomState(1)
        xb = rs.rand(3000, 24).astype("float32")
        xq = rs.rand(20, 24).astype("float32")
        index = faiss.index_factory(24, "IVF32,Flat")
        index.train(xb)
        index.add(xb)
        index.nprobe = 4
        ref = index.range_search(xq, 1.0)
        index.parallel_mode = 3
        try:
            new = index.range_search(xq, 1.0)
        except RuntimeError as e:
            print("refused:", e)
        else:
            assert (new[0] == ref[0]).all()
            print("answered")
    """)
    result = run_python(code)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("bad", [7, 4, -1, PARALLEL_MODE_CCD | 1,
                                 PARALLEL_MODE_CCD | 2048, 1 << 17, 1 << 30])
def test_invalid_modes_raise(data, default_pool, bad):
    """A mode IndexIVF does not support is stored (it is a plain int
    field) but every search refuses it with a RuntimeError naming it:
    directly, search_preassigned, range_search, and from C++ callers
    (IndexIDMap2, a threaded IndexShards). Nothing aborts, and the index
    works again once the mode is fixed."""
    xb, xq = data
    index = cached_ivf("IVF32,Flat")
    D_ref, I_ref = index.search(xq, 10)
    index.parallel_mode = bad
    assert index.parallel_mode == bad
    with pytest.raises(RuntimeError, match=f"parallel_mode {bad} not"):
        index.search(xq, 10)
    with pytest.raises(RuntimeError, match="not supported"):
        index.range_search(xq, 1.0)
    coarse_dis, assign = index.quantizer.search(xq, index.nprobe)
    D = np.empty((len(xq), 10), np.float32)
    I = np.empty((len(xq), 10), np.int64)
    with pytest.raises(RuntimeError, match="not supported"):
        index.search_preassigned(
            len(xq), faiss.swig_ptr(xq), 10, faiss.swig_ptr(assign),
            faiss.swig_ptr(coarse_dis), faiss.swig_ptr(D), faiss.swig_ptr(I),
            False, None)

    inner = faiss.clone_index(index)
    inner.reset()
    idmap = faiss.IndexIDMap2(inner)
    idmap.add_with_ids(xb[:500], np.arange(500, dtype=np.int64))
    assert ivf_of(idmap).parallel_mode == bad  # the clone copied it
    with pytest.raises(RuntimeError, match="not supported"):
        idmap.search(xq, 10)
    shards = faiss.IndexShards(xb.shape[1], True, True)
    shards.add_shard(index)
    shards.add_shard(make_ivf("IVF32,Flat", data=(xb[:2000], xq)))
    with pytest.raises(RuntimeError, match="not supported"):
        shards.search(xq, 10)

    index.parallel_mode = 0
    assert_same_results(D_ref, I_ref, *index.search(xq, 10))


def test_mode_field_types(default_pool):
    """The field takes ints only: a string is a TypeError, an int beyond
    32 bits an OverflowError, and neither changes it."""
    index = cached_ivf("IVF32,Flat")
    index.parallel_mode = PARALLEL_MODE_CCD
    with pytest.raises(TypeError):
        index.parallel_mode = "ccd"
    with pytest.raises(OverflowError):
        index.parallel_mode = 1 << 40
    assert index.parallel_mode == PARALLEL_MODE_CCD


def search_single_scan(index, xq, k, bs):
    """FAISS's tests/test_ivflib.py: search_preassigned by blocks of bs
    lists into one faiss.ResultHeap, with PARALLEL_MODE_NO_HEAP_INIT
    or-ed into the index's mode so the heaps carry over between calls."""
    nprobe = min(index.nprobe, index.nlist)
    coarse_dis, assign = index.quantizer.search(xq, nprobe)
    assign_buckets = assign // bs
    nq = len(xq)
    rh = faiss.ResultHeap(nq, k)
    index.parallel_mode |= index.PARALLEL_MODE_NO_HEAP_INIT
    for l0 in range(0, index.nlist, bs):
        skip_rows, skip_cols = np.where(assign_buckets != l0 // bs)
        sub_assign = assign.copy()
        sub_assign[skip_rows, skip_cols] = -1
        index.search_preassigned(
            nq, faiss.swig_ptr(xq), k, faiss.swig_ptr(sub_assign),
            faiss.swig_ptr(coarse_dis), faiss.swig_ptr(rh.D),
            faiss.swig_ptr(rh.I), False, None)
    rh.finalize()
    return rh.D, rh.I


@pytest.mark.parametrize("description", ["IVF32,Flat", "IVF32,SQ8"])
def test_no_heap_init_with_the_mode(data, default_pool, description):
    """PARALLEL_MODE_NO_HEAP_INIT | PARALLEL_MODE_CCD: the block-wise scan
    of FAISS's test_ivflib runs on the pool and equals both the plain
    search and the same scan in stock mode."""
    _, xq = data
    index = cached_ivf(description)
    D_ref, I_ref = index.search(xq, 10)
    index.parallel_mode = 0
    D_stock, I_stock = search_single_scan(index, xq, 10, bs=8)
    assert index.parallel_mode == index.PARALLEL_MODE_NO_HEAP_INIT
    assert_same_results(D_ref, I_ref, D_stock, I_stock)

    index.parallel_mode = PARALLEL_MODE_CCD
    before = served(default_pool)
    D, I = search_single_scan(index, xq, 10, bs=8)
    assert served(default_pool) > before
    assert index.parallel_mode == \
        PARALLEL_MODE_CCD | index.PARALLEL_MODE_NO_HEAP_INIT
    assert_same_results(D_ref, I_ref, D, I)
    assert_same_results(D_stock, I_stock, D, I)


# ----------------------------------------------------- the default pool

def test_default_pool_can_change(data, pool):
    """Each search in the mode runs on the default pool of the moment."""
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    D_ref, I_ref = index.search(xq, 10)
    index.parallel_mode = PARALLEL_MODE_CCD
    for p in (pool, faiss.ccd.Pool("1x1", "rr"), pool):
        faiss.ccd.set_default_pool(p)
        before = served(p)
        assert_same_results(D_ref, I_ref, *index.search(xq, 10))
        assert served(p) > before
    faiss.ccd.set_default_pool(None)
    before = served(pool)
    assert_same_results(D_ref, I_ref, *index.search(xq, 10))
    assert served(pool) == before
    assert served(faiss.ccd.get_default_pool()) > 0


def test_default_pool_replaced_while_searching(data):
    """Threads search in the mode while the main thread keeps replacing the
    default pool: every search finishes on the pool it started with."""
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    index.nprobe = 8
    D_ref, I_ref = index.search(xq, 10)
    index.parallel_mode = PARALLEL_MODE_CCD
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
            faiss.ccd.set_default_pool(
                faiss.ccd.Pool("2x1", faiss.ccd.POLICIES[i % 3]))
            time.sleep(0.005)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[0]


# ------------------------------------------ what the pool does not serve

def test_empty_and_fast_scan_equal_stock(data, default_pool):
    """An empty index answers -1 labels (nothing to scan, no tasks); the
    FastScan family has no per-list scanner and keeps its own search.
    Both equal mode 0."""
    xb, xq = data
    empty = faiss.index_factory(xb.shape[1], "IVF32,Flat")
    empty.train(xb)
    D_ref, I_ref = empty.search(xq, 5)
    empty.parallel_mode = PARALLEL_MODE_CCD
    before = tasks_run(default_pool)
    D, I = empty.search(xq, 5)
    assert tasks_run(default_pool) == before
    np.testing.assert_array_equal(I, I_ref)
    np.testing.assert_array_equal(D, D_ref)
    assert (I == -1).all()

    fs = cached_ivf("IVF32,PQ8x4fs")
    D_ref, I_ref = fs.search(xq, 10)
    fs.parallel_mode = PARALLEL_MODE_CCD
    before = served(default_pool)
    assert_same_results(D_ref, I_ref, *fs.search(xq, 10))
    assert served(default_pool) == before


def test_selector_in_the_mode(data, default_pool):
    """An IDSelector in the params of a search in the mode filters the
    scans on the pool, with mode 0's answers."""
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    sel = faiss.IDSelectorRange(0, 1000)
    params = faiss.SearchParametersIVF(nprobe=8)
    params.sel = sel
    D_ref, I_ref = index.search(xq, 10, params=params)
    index.parallel_mode = PARALLEL_MODE_CCD
    before = served(default_pool)
    D, I = index.search(xq, 10, params=params)
    assert served(default_pool) > before
    assert_same_results(D_ref, I_ref, D, I)
    assert ((I >= 0) & (I < 1000) | (I == -1)).all()


def test_other_index_types_unchanged(data, default_pool, hnsw):
    """Non-IVF indexes have no parallel_mode and never use the pool."""
    xb, xq = data
    flat = faiss.IndexFlatL2(xb.shape[1])
    flat.add(xb)
    before = served(default_pool)
    flat.search(xq, 5)
    hnsw.search(xq, 5)
    assert served(default_pool) == before
    assert not hasattr(flat, "parallel_mode")


def test_mode_inputs_as_stock(data, default_pool):
    """The mode changes where the scans run, not what search() accepts:
    float64 queries convert as in mode 0, and what mode 0 refuses the mode
    refuses with the same exception."""
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    D_ref, I_ref = index.search(xq, 10)
    inputs = [(xq.astype(np.float64), 10), (xq[:, :5], 10), (xq, 0),
              (xq[0], 10), (xq.tolist(), 10)]
    outcomes = []
    for x, k in inputs:
        try:
            outcomes.append(index.search(x, k))
        except Exception as e:  # noqa: BLE001: compared below
            outcomes.append(type(e))
    assert not isinstance(outcomes[0], type)
    index.parallel_mode = PARALLEL_MODE_CCD
    for (x, k), ref in zip(inputs, outcomes):
        if isinstance(ref, type):
            with pytest.raises(ref):
                index.search(x, k)
        else:
            assert_same_results(*ref, *index.search(x, k))
    assert_same_results(D_ref, I_ref, *index.search(xq, 10))
