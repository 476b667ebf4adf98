"""faiss.IndexIVFCCD and faiss.SearchParametersIVFCCD: results equal stock
faiss, every IVF type is served by the pool (FastScan excepted), inputs,
lifetimes."""

import gc
import mmap
import textwrap

import faiss
import numpy as np
import pytest

from conftest import (assert_same_range_results, assert_same_results,
                      cached_ivf, make_ivf, run_python, served)


def ccd_params(pool, nprobe=8, **kwargs):
    return faiss.SearchParametersIVFCCD(nprobe=nprobe, runtime=pool.runtime,
                                        **kwargs)


# PQ8x4: 16 centroids per sub-quantizer, which trains in a second (PQ8's
# 256 take a minute on one thread).
@pytest.mark.parametrize("description", ["IVF32,Flat", "IVF32,PQ8x4",
                                         "IVF32,SQ8"])
@pytest.mark.parametrize("metric", [faiss.METRIC_L2,
                                    faiss.METRIC_INNER_PRODUCT])
@pytest.mark.parametrize("policy", faiss.ccd.POLICIES)
def test_search_equals_stock(data, description, metric, policy):
    """The wrapper answers as the index's own search, on the pool, for
    every codec, metric, policy, nprobe and k."""
    _, xq = data
    index = cached_ivf(description, metric)
    pool = faiss.ccd.Pool("2x1", policy)
    wrapper = faiss.IndexIVFCCD(index, pool.runtime, 1)
    assert wrapper.uses_scanners()
    assert wrapper.d == index.d and wrapper.ntotal == index.ntotal
    assert wrapper.table_id == 1
    for nprobe in (1, 8, 32):
        index.nprobe = nprobe
        for k in (1, 10, 100):
            D_ref, I_ref = index.search(xq, k)
            before = served(pool)
            D, I = wrapper.search(xq, k)
            assert served(pool) > before, "did not run on the pool"
            assert D.dtype == np.float32 and I.dtype == np.int64
            assert D.shape == I.shape == (len(xq), k)
            assert_same_results(D_ref, I_ref, D, I)
    index.nprobe = 8


@pytest.mark.parametrize("shape", [
    dict(),
    dict(split_factor=0.0),  # no list is cut
    dict(split_factor=0.5, chunk_factor=0.25, min_chunk=1),  # many cuts
    dict(list_major_min_batch=1),  # list-major from one query
    dict(list_major_min_batch=10**9),  # always query-major
])
@pytest.mark.parametrize("description", ["IVF32,Flat", "IVF32,PQ8x4"])
def test_params_on_any_index_equal_stock(data, pool, description, shape):
    """SearchParametersIVFCCD passed to a plain IVF index's search and
    range_search runs that call on the given pool, whatever the task
    shape, and answers as stock."""
    _, xq = data
    index = cached_ivf(description)
    assert index.parallel_mode == 0
    params = ccd_params(pool, helpers=1, **shape)  # cut for helpers
    D_ref, I_ref = index.search(xq, 10)
    before = served(pool)
    assert_same_results(D_ref, I_ref, *index.search(xq, 10, params=params))
    assert served(pool) > before
    radius = float(np.median(D_ref[:, 5]))
    ref = index.range_search(xq, radius)
    before = served(pool)
    assert_same_range_results(ref, index.range_search(xq, radius,
                                                      params=params))
    assert served(pool) > before
    assert index.parallel_mode == 0, "params changed the index"


def test_single_query_and_outputs(data, pool, ivf_flat):
    """One query; D and I given by the caller are filled and returned."""
    _, xq = data
    wrapper = faiss.IndexIVFCCD(ivf_flat, pool.runtime)
    D_ref, I_ref = ivf_flat.search(xq[:1], 5)
    D = np.zeros((1, 5), np.float32)
    I = np.zeros((1, 5), np.int64)
    D2, I2 = wrapper.search(xq[:1], 5, D=D, I=I)
    assert D2 is D and I2 is I
    assert_same_results(D_ref, I_ref, D, I)


def mmap_array(shape, dtype):
    """An array in its own anonymous mapping: far above 4 GiB."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    array = np.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype).reshape(shape)
    assert array.__array_interface__["data"][0] > 2**32
    return array


def test_arrays_at_high_addresses(data, pool, ivf_flat):
    """Addresses must pass whole (SWIG's 32-bit uintptr_t once turned every
    address above 4 GiB into an OverflowError)."""
    _, xq = data
    x = mmap_array(xq.shape, np.float32)
    x[:] = xq
    D = mmap_array((len(xq), 10), np.float32)
    I = mmap_array((len(xq), 10), np.int64)
    wrapper = faiss.IndexIVFCCD(ivf_flat, pool.runtime)
    wrapper.search(x, 10, D=D, I=I)
    assert_same_results(*ivf_flat.search(xq, 10), D, I)


def test_params_nprobe(data, pool, ivf_flat):
    """A plain SearchParametersIVF given to the wrapper sets nprobe."""
    _, xq = data
    wrapper = faiss.IndexIVFCCD(ivf_flat, pool.runtime)
    params = faiss.SearchParametersIVF()
    params.nprobe = 32
    assert_same_results(*ivf_flat.search(xq, 10, params=params),
                        *wrapper.search(xq, 10, params=params))


def test_more_results_than_candidates(data, pool):
    """k above the candidates: -1 labels past the last, as stock."""
    xb, xq = data
    index = make_ivf("IVF32,Flat", nprobe=1, data=(xb[:300], xq))
    D_ref, I_ref = index.search(xq, 600)
    D, I = faiss.IndexIVFCCD(index, pool.runtime).search(xq, 600)
    assert (I == -1).any()
    assert_same_results(D_ref, I_ref, D, I)


@pytest.mark.parametrize("metric", [faiss.METRIC_L2,
                                    faiss.METRIC_INNER_PRODUCT])
def test_range_search_equals_stock(data, pool, metric):
    _, xq = data
    index = make_ivf("IVF32,Flat", metric, data=data)
    D_ref, _ = index.search(xq, 20)
    radius = float(np.median(D_ref[:, 10]))
    ref = index.range_search(xq, radius)
    before = served(pool)
    new = faiss.IndexIVFCCD(index, pool.runtime).range_search(xq, radius)
    assert served(pool) > before
    assert_same_range_results(ref, new)


def make_ivfpqr(xb):
    # 8-bit codes: FAISS 1.7.3's IVFPQR training with 4-bit ones reads
    # uninitialised memory (NaNs in its k-means when the heap is dirty).
    d = xb.shape[1]
    index = faiss.IndexIVFPQR(faiss.IndexFlatL2(d), d, 32, 4, 8, 4, 8)
    index.do_polysemous_training = False
    return index


def make_ivf_flat_dedup(xb):
    d = xb.shape[1]
    return faiss.IndexIVFFlatDedup(faiss.IndexFlatL2(d), d, 32)


@pytest.mark.parametrize("make", [make_ivfpqr, make_ivf_flat_dedup])
def test_own_search_preassigned_served_by_pool(data, pool, make):
    """IVFPQR re-ranks and IVFFlatDedup adds duplicates in their own
    search_preassigned, around the scans: those scans run on the pool, and
    the answers stay the index's own (wrapper, CCD mode and params)."""
    xb, xq = data
    index = make(xb)
    index.train(xb)
    index.add(np.concatenate([xb, xb[:500]]))  # duplicates for Dedup
    index.nprobe = 8
    D_ref, I_ref = index.search(xq, 10)
    if isinstance(index, faiss.IndexIVFFlatDedup):
        assert (I_ref[:, :2] < 500).any(), "no duplicate answered"

    wrapper = faiss.IndexIVFCCD(index, pool.runtime)
    assert wrapper.uses_scanners()
    before = served(pool)
    assert_same_results(D_ref, I_ref, *wrapper.search(xq, 10))
    assert served(pool) > before

    before = served(pool)
    assert_same_results(D_ref, I_ref,
                        *index.search(xq, 10, params=ccd_params(pool)))
    assert served(pool) > before

    faiss.ccd.set_default_pool(pool)
    index.parallel_mode = faiss.PARALLEL_MODE_CCD
    before = served(pool)
    assert_same_results(D_ref, I_ref, *index.search(xq, 10))
    assert served(pool) > before


def codes_scanned(search):
    """Run search(); return its result and the codes FAISS's global
    indexIVF_stats counted meanwhile."""
    stats = faiss.cvar.indexIVF_stats
    stats.reset()
    result = search()
    return result, stats.ndis


@pytest.mark.parametrize("max_codes", [1, 200, 1000])
def test_max_codes_served_by_pool(data, pool, max_codes):
    """max_codes (in the params or on the index) stops a query's probes as
    FAISS does, on the pool: same answers, same number of codes scanned."""
    _, xq = data
    index = make_ivf("IVF32,Flat", nprobe=16, data=data)
    params = faiss.SearchParametersIVF(nprobe=16, max_codes=max_codes)
    ref, ndis_ref = codes_scanned(
        lambda: index.search(xq, 10, params=params))
    _, ndis_all = codes_scanned(lambda: index.search(xq, 10))
    assert ndis_ref < ndis_all, "max_codes changed nothing"
    before = served(pool)
    new, ndis = codes_scanned(lambda: index.search(
        xq, 10, params=ccd_params(pool, nprobe=16, max_codes=max_codes)))
    assert served(pool) > before
    assert_same_results(*ref, *new)
    assert ndis == ndis_ref

    index.max_codes = max_codes
    wrapper = faiss.IndexIVFCCD(index, pool.runtime)
    before = served(pool)
    new, ndis = codes_scanned(lambda: wrapper.search(xq, 10))
    assert served(pool) > before
    assert_same_results(*ref, *new)
    assert ndis == ndis_ref


@pytest.mark.parametrize("make_sel", [
    lambda: faiss.IDSelectorRange(100, 2100),
    lambda: faiss.IDSelectorBatch(np.arange(0, 6000, 7, dtype=np.int64)),
    lambda: faiss.IDSelectorNot(faiss.IDSelectorRange(0, 3000)),
])
def test_id_selectors_served_by_pool(data, pool, make_sel):
    """An IDSelector in the params filters the scans on the pool: k-NN and
    range results equal stock, and only selected ids come back."""
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    sel = make_sel()
    params = faiss.SearchParametersIVF(nprobe=8, sel=sel)
    D_ref, I_ref = index.search(xq, 10, params=params)
    selected = np.array([sel.is_member(i) for i in range(index.ntotal)])
    assert not selected.all()
    assert selected[I_ref[I_ref >= 0]].all()
    before = served(pool)
    D, I = index.search(xq, 10, params=ccd_params(pool, sel=sel))
    assert served(pool) > before
    assert_same_results(D_ref, I_ref, D, I)
    assert selected[I[I >= 0]].all()
    radius = float(np.median(D_ref[:, 5]))
    assert_same_range_results(
        index.range_search(xq, radius, params=params),
        index.range_search(xq, radius, params=ccd_params(pool, sel=sel)))


def test_max_codes_with_sorted_range_selector(data, pool):
    """max_codes with a sorted IDSelectorRange (FAISS counts codes over the
    range only): the scans cannot answer it, FAISS's own loop does, and
    the answer is stock's."""
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    sel = faiss.IDSelectorRange(1000, 4000, True)
    D_ref, I_ref = index.search(xq, 10, params=faiss.SearchParametersIVF(
        nprobe=16, max_codes=300, sel=sel))
    assert_same_results(D_ref, I_ref, *index.search(
        xq, 10, params=ccd_params(pool, nprobe=16, max_codes=300, sel=sel)))


def outcome(call):
    """(result, None) or (None, exception type)."""
    try:
        return call(), None
    except Exception as e:  # noqa: BLE001: compared with stock's below
        return None, type(e)


def test_range_search_thresholds(data, pool, ivf_flat):
    """The radius: whatever stock range_search takes (Python numbers;
    NaN finds nothing) the wrapper and the params take with the same
    answer; what it refuses (strings; numpy's int64 and float32 scalars in
    faiss 1.7.3's SWIG) they refuse with the same TypeError."""
    _, xq = data
    wrapper = faiss.IndexIVFCCD(ivf_flat, pool.runtime)
    for thresh in (3, 3.0, np.float64(3.0), np.int64(3), np.float32(3.0),
                   float("nan"), "far"):
        ref, ref_error = outcome(lambda: ivf_flat.range_search(xq, thresh))
        for call in (lambda: wrapper.range_search(xq, thresh),
                     lambda: ivf_flat.range_search(xq, thresh,
                                                   params=ccd_params(pool))):
            new, error = outcome(call)
            assert error is ref_error, (thresh, error, ref_error)
            if error is None:
                assert_same_range_results(ref, new)
            else:
                assert error is TypeError
        if thresh != thresh:  # NaN
            assert (ref[0] == 0).all()


def test_fast_scan_equals_stock_off_the_pool(data, pool):
    """The FastScan family has no per-list scanner: the wrapper and the
    mode give FAISS's own answer, and the pool runs nothing. FAISS 1.7.3's
    FastScan search takes no params at all: SearchParametersIVFCCD is
    refused with its RuntimeError, as any params are."""
    _, xq = data
    index = cached_ivf("IVF32,PQ8x4fs")
    D_ref, I_ref = index.search(xq, 10)
    wrapper = faiss.IndexIVFCCD(index, pool.runtime)
    assert not wrapper.uses_scanners()
    before = served(pool)
    assert_same_results(D_ref, I_ref, *wrapper.search(xq, 10))
    faiss.ccd.set_default_pool(pool)
    index.parallel_mode = faiss.PARALLEL_MODE_CCD
    assert_same_results(D_ref, I_ref, *index.search(xq, 10))
    assert served(pool) == before
    for params in (faiss.SearchParametersIVF(nprobe=8), ccd_params(pool)):
        with pytest.raises(RuntimeError, match="params not supported"):
            index.search(xq, 10, params=params)


# Inputs stock faiss's Python search() converts (float64, int32,
# non-contiguous) or refuses. The wrapper is an ordinary faiss Index, so it
# behaves exactly as stock faiss 1.7.3 does on the same input: the same
# answer or the same exception (some of FAISS's own checks are asserts).
BAD_QUERIES = [
    ([[0.0] * 24], "list"),
    (np.zeros((2, 24), np.float64), "float64"),
    (np.zeros((2, 24), np.int32), "int32"),
    (np.zeros((2, 23), np.float32), "d=23"),
    (np.zeros(24, np.float32), "1-D"),
    (np.zeros((2, 3, 24), np.float32), "3-D"),
    (np.ones((24, 4), np.float32).T, "transposed"),
    (np.ones((4, 48), np.float32)[:, ::2], "strided"),
]


@pytest.mark.parametrize("x", [q for q, _ in BAD_QUERIES],
                         ids=[name for _, name in BAD_QUERIES])
def test_odd_queries_as_stock(pool, ivf_flat, x):
    """Odd queries: the wrapper, the params and the mode answer what stock
    search answers, or raise the exception it raises; nothing crashes."""
    wrapper = faiss.IndexIVFCCD(ivf_flat, pool.runtime)
    faiss.ccd.set_default_pool(pool)
    for kind in ("search", "range_search"):
        arg = 5 if kind == "search" else 1.0
        ref, ref_error = outcome(lambda: getattr(ivf_flat, kind)(x, arg))

        def in_the_mode():
            ivf_flat.parallel_mode = faiss.PARALLEL_MODE_CCD
            try:
                return getattr(ivf_flat, kind)(x, arg)
            finally:
                ivf_flat.parallel_mode = 0

        calls = {
            "wrapper": lambda: getattr(wrapper, kind)(x, arg),
            "params": lambda: getattr(ivf_flat, kind)(
                x, arg, params=ccd_params(pool)),
            "mode": in_the_mode,
        }
        for name, call in calls.items():
            new, error = outcome(call)
            assert error is ref_error, (kind, name, error, ref_error)
            if ref_error is None:
                if kind == "search":
                    assert_same_results(*ref, *new)
                else:
                    assert_same_range_results(ref, new)
            else:
                assert issubclass(error, (TypeError, ValueError,
                                          RuntimeError, AssertionError,
                                          AttributeError))


def test_bad_arguments(data, pool, ivf_flat, hnsw):
    """Bad k, params, outputs and constructor arguments raise (the same
    exception as stock search where stock checks), never crash; the
    wrapper works afterwards."""
    _, xq = data
    wrapper = faiss.IndexIVFCCD(ivf_flat, pool.runtime)
    # The exception stock search raises, with a message that names k.
    for k in (0, -3, 2.5, True, "5"):
        _, ref_error = outcome(lambda: ivf_flat.search(xq, k))
        assert ref_error is not None, k
        with pytest.raises(ref_error, match=r"\bk\b"):
            wrapper.search(xq, k)
    with pytest.raises(RuntimeError, match="incorrect type"):
        wrapper.search(xq, 5, params=faiss.SearchParametersHNSW())
    with pytest.raises(TypeError):
        wrapper.search(xq, 5, params="nprobe=3")
    with pytest.raises(AssertionError):  # stock faiss's shape check
        wrapper.search(xq, 5, D=np.zeros((1, 5), np.float32))
    with pytest.raises(TypeError):
        wrapper.search(xq, 5, I=np.zeros((len(xq), 5), np.int32))
    with pytest.raises(TypeError):
        wrapper.search(xq, 5, D=np.zeros((len(xq), 5), np.float64))
    with pytest.raises(ValueError, match="contiguous"):
        wrapper.search(xq, 5, D=np.zeros((len(xq), 10), np.float32)[:, ::2])
    with pytest.raises(TypeError):
        wrapper.range_search(xq, "far")
    # Constructor: an IVF index, a CcdRuntime, a table id below 2**32 - 1.
    for index, runtime in ((hnsw, pool.runtime),
                           (faiss.IndexFlatL2(24), pool.runtime),
                           (ivf_flat, "pool"), (ivf_flat, pool)):
        with pytest.raises(TypeError):
            faiss.IndexIVFCCD(index, runtime)
    with pytest.raises(RuntimeError, match="runtime is null"):
        faiss.IndexIVFCCD(ivf_flat, None)
    with pytest.raises(RuntimeError, match="index is null"):
        faiss.IndexIVFCCD(None, pool.runtime)
    for table_id, error in ((-1, ValueError), (2**32, ValueError),
                            (2.5, TypeError), ("1", TypeError)):
        with pytest.raises(error, match="table_id"):
            faiss.IndexIVFCCD(ivf_flat, pool.runtime, table_id)
    with pytest.raises(RuntimeError, match="reserved"):
        faiss.IndexIVFCCD(ivf_flat, pool.runtime, 2**32 - 1)
    # The wrapper still works after all that.
    assert_same_results(*ivf_flat.search(xq, 5), *wrapper.search(xq, 5))


def test_bad_search_parameters(data, pool, ivf_flat):
    """SearchParametersIVFCCD refuses what it cannot hold and a search
    refuses what it cannot use, with Python exceptions."""
    _, xq = data
    with pytest.raises(TypeError, match="bogus"):  # stock: a bare assert
        faiss.SearchParametersIVFCCD(bogus=3)
    for runtime in ("x", pool, 3):
        with pytest.raises(TypeError):
            faiss.SearchParametersIVFCCD(runtime=runtime)
    with pytest.raises(OverflowError):
        faiss.SearchParametersIVFCCD(nprobe=-1)
    with pytest.raises(RuntimeError, match="nprobe"):
        ivf_flat.search(xq, 5, params=ccd_params(pool, nprobe=0))
    wrapper = faiss.IndexIVFCCD(ivf_flat, pool.runtime)
    with pytest.raises(RuntimeError, match="nprobe"):
        wrapper.search(xq, 5, params=ccd_params(pool, nprobe=0))
    # Negative knobs are refused (0 means "no splitting").
    for knob, bad in (("split_factor", -1), ("chunk_factor", -1),
                      ("list_major_min_batch", -2)):   # -1: automatic
        with pytest.raises(RuntimeError, match=knob):
            ivf_flat.search(xq, 5, params=ccd_params(pool, **{knob: bad}))
    assert_same_results(*ivf_flat.search(xq, 5), *ivf_flat.search(
        xq, 5, params=ccd_params(pool, split_factor=0.0)))


def test_chunks_of_zero_codes_do_not_loop():
    """chunk_factor=0 with min_chunk=0 must either be refused or scan in
    chunks of at least one code (it once listed chunks of zero codes
    forever). Run in a child limited to 1 GiB of address space, which such
    a loop exhausts in well under a second (under ASan, which reserves far
    more address space, the child's 120 s timeout is the limit)."""
    code = textwrap.dedent("""
        import os, resource
        if not os.environ.get("FAISS_CCD_UNDER_ASAN"):
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        import faiss, numpy as np
        faiss.omp_set_num_threads(1)
        rs = np.random.RandomState(1)
        xb = rs.rand(3000, 24).astype("float32")
        xq = rs.rand(5, 24).astype("float32")
        index = faiss.index_factory(24, "IVF32,Flat")
        index.train(xb)
        index.add(xb)
        pool = faiss.ccd.Pool("2x1", monitor=False)
        params = faiss.SearchParametersIVFCCD(
            nprobe=4, split_factor=0.5, chunk_factor=0.0, min_chunk=0,
            helpers=1, runtime=pool.runtime)  # helpers: lists are cut
        ref = index.search(xq, 5, params=faiss.SearchParametersIVF(nprobe=4))
        try:
            new = index.search(xq, 5, params=params)
        except RuntimeError as e:
            print("refused:", e)
        else:
            assert (new[1] == ref[1]).all()
            print("answered")
    """)
    result = run_python(code)
    assert result.returncode == 0, result.stderr[-2000:]


def test_cpp_errors_become_python_errors(data, pool):
    """An untrained wrapped index is a RuntimeError naming the cause; an
    empty one answers as FAISS does (-1 labels, no range hits)."""
    xb, xq = data
    index = faiss.index_factory(xb.shape[1], "IVF32,Flat")
    wrapper = faiss.IndexIVFCCD(index, pool.runtime)
    with pytest.raises(RuntimeError, match="not trained"):
        wrapper.search(xq, 5)
    with pytest.raises(RuntimeError, match="not trained"):
        wrapper.range_search(xq, 1.0)
    index.train(xb)
    # Empty: FAISS's own answer, -1 labels.
    D_ref, I_ref = index.search(xq, 5)
    D, I = wrapper.search(xq, 5)
    assert (I == -1).all()
    np.testing.assert_array_equal(D, D_ref)
    lims, _, _ = wrapper.range_search(xq, 1.0)
    assert (lims == 0).all()
    # The wrapper follows the index it wraps.
    index.add(xb)
    index.nprobe = 4
    assert wrapper.ntotal == 0  # as FAISS's wrappers, synced on its calls
    assert_same_results(*index.search(xq, 5), *wrapper.search(xq, 5))


def test_wrapper_keeps_index_and_pool_alive(data):
    """The wrapper holds its index and its pool: dropping the caller's
    references (and reusing their memory) changes nothing, and the field
    that points at the index cannot be rebound from Python."""
    _, xq = data
    index = make_ivf("IVF32,Flat", data=data)
    D_ref, I_ref = index.search(xq, 10)
    wrapper = faiss.IndexIVFCCD(index, faiss.ccd.Pool("2x1").runtime)
    with pytest.raises(AttributeError):
        wrapper.index = None  # would crash the next search
    with pytest.raises(AttributeError):
        wrapper.index = make_ivf("IVF32,Flat", data=data)
    del index
    gc.collect()
    junk = [np.ones(10**5, np.float32) for _ in range(20)]  # reuse memory
    assert_same_results(D_ref, I_ref, *wrapper.search(xq, 10))
    assert wrapper.index.ntotal == len(data[0])
    del junk


def test_params_keep_their_objects_alive(data, ivf_flat):
    """SearchParametersIVFCCD keeps the runtime, selector and quantizer
    parameters it is given (keyword or assignment) referenced: dropping the
    caller's references and making other pools and selectors meanwhile
    changes nothing."""
    _, xq = data
    keep = faiss.IDSelectorRange(0, 1000)  # stock params need it kept
    sel_params = faiss.SearchParametersIVF(nprobe=8)
    sel_params.sel = keep
    D_ref, I_ref = ivf_flat.search(xq, 10, params=sel_params)

    by_keyword = faiss.SearchParametersIVFCCD(
        nprobe=8, runtime=faiss.ccd.Pool("2x1").runtime,
        sel=faiss.IDSelectorRange(0, 1000),
        quantizer_params=faiss.SearchParameters())
    by_assignment = faiss.SearchParametersIVFCCD(nprobe=8)
    by_assignment.runtime = faiss.ccd.Pool("2x1").runtime
    by_assignment.sel = faiss.IDSelectorRange(0, 1000)
    gc.collect()
    junk = [faiss.ccd.Pool("1x1", monitor=False) for _ in range(3)]
    junk += [faiss.IDSelectorRange(5000, 5001) for _ in range(100)]
    for params in (by_keyword, by_assignment):
        D, I = ivf_flat.search(xq, 10, params=params)
        assert_same_results(D_ref, I_ref, D, I)
        assert ((I >= 0) & (I < 1000) | (I == -1)).all()
    del junk, keep


def test_table_ids_share_a_pool(data, pool):
    """Indexes under different table ids (wrapper or params) share one pool
    and each answers its own."""
    xb, xq = data
    a = cached_ivf("IVF32,Flat")
    b = cached_ivf("IVF32,SQ8")
    wrappers = [faiss.IndexIVFCCD(a, pool.runtime, 0),
                faiss.IndexIVFCCD(b, pool.runtime, 1),
                faiss.IndexIVFCCD(a, pool.runtime, 7)]
    refs = [a.search(xq, 10), b.search(xq, 10), a.search(xq, 10)]
    for wrapper, ref in zip(wrappers, refs):
        assert_same_results(*ref, *wrapper.search(xq, 10))
    assert_same_results(*refs[1], *b.search(
        xq, 10, params=ccd_params(pool, table_id=12345)))


def test_index_from_a_wrapper(data, pool):
    """An IVF inside an IndexPreTransform / IndexIDMap: wrap the IVF."""
    xb, xq = data
    index = faiss.index_factory(xb.shape[1], "PCA16,IVF32,Flat")
    index.train(xb)
    index.add(xb)
    ivf = faiss.extract_index_ivf(index)
    ivf.nprobe = 8
    xt = index.chain.at(0).apply_py(xq)
    assert_same_results(*ivf.search(xt, 10),
                        *faiss.IndexIVFCCD(ivf, pool.runtime).search(xt, 10))
