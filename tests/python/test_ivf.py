"""faiss_ccd.IndexIVFCCD: results equal stock faiss, inputs, lifetimes."""

import gc
import mmap

import faiss
import numpy as np
import pytest

import faiss_ccd
from conftest import assert_same_results, cached_ivf, make_ivf


# PQ8x4: 16 centroids per sub-quantizer, which trains in a second (PQ8's
# 256 take a minute on one thread).
@pytest.mark.parametrize("description", ["IVF32,Flat", "IVF32,PQ8x4",
                                         "IVF32,SQ8"])
@pytest.mark.parametrize("metric", [faiss.METRIC_L2,
                                    faiss.METRIC_INNER_PRODUCT])
@pytest.mark.parametrize("policy", faiss_ccd.POLICIES)
def test_search_equals_stock(data, description, metric, policy):
    _, xq = data
    index = cached_ivf(description, metric)
    pool = faiss_ccd.Pool("2x1", policy)
    wrapper = faiss_ccd.IndexIVFCCD(index, pool, table_id=1)
    for nprobe in (1, 8, 32):
        index.nprobe = nprobe
        for k in (1, 10, 100):
            D_ref, I_ref = index.search(xq, k)
            D, I = wrapper.search(xq, k)
            assert D.dtype == np.float32 and I.dtype == np.int64
            assert D.shape == I.shape == (len(xq), k)
            assert_same_results(D_ref, I_ref, D, I)


def test_single_query_and_outputs(data, pool, ivf_flat):
    _, xq = data
    wrapper = faiss_ccd.IndexIVFCCD(ivf_flat, pool)
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
    wrapper = faiss_ccd.IndexIVFCCD(ivf_flat, pool)
    wrapper.search(x, 10, D=D, I=I)
    assert_same_results(*ivf_flat.search(xq, 10), D, I)


def test_params_nprobe(data, pool, ivf_flat):
    _, xq = data
    wrapper = faiss_ccd.IndexIVFCCD(ivf_flat, pool)
    params = faiss.SearchParametersIVF()
    params.nprobe = 32
    assert_same_results(*ivf_flat.search(xq, 10, params=params),
                        *wrapper.search(xq, 10, params=params))


def test_more_results_than_candidates(data, pool):
    xb, xq = data
    index = make_ivf("IVF32,Flat", nprobe=1, data=(xb[:300], xq))
    D_ref, I_ref = index.search(xq, 600)
    D, I = faiss_ccd.IndexIVFCCD(index, pool).search(xq, 600)
    assert (I == -1).any()
    assert_same_results(D_ref, I_ref, D, I)


@pytest.mark.parametrize("metric", [faiss.METRIC_L2,
                                    faiss.METRIC_INNER_PRODUCT])
def test_range_search_equals_stock(data, pool, metric):
    _, xq = data
    index = make_ivf("IVF32,Flat", metric, data=data)
    D_ref, _ = index.search(xq, 20)
    radius = float(np.median(D_ref[:, 10]))
    lims_ref, D_r, I_r = index.range_search(xq, radius)
    lims, D, I = faiss_ccd.IndexIVFCCD(index, pool).range_search(xq, radius)
    assert lims.dtype == lims_ref.dtype
    np.testing.assert_array_equal(lims, lims_ref)
    for i in range(len(xq)):
        a, b = lims[i], lims[i + 1]
        order, order_ref = np.argsort(I[a:b]), np.argsort(I_r[a:b])
        np.testing.assert_array_equal(I[a:b][order], I_r[a:b][order_ref])
        np.testing.assert_allclose(D[a:b][order], D_r[a:b][order_ref],
                                   rtol=1e-5, atol=1e-5)


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
def test_own_search_preassigned_falls_back(data, pool, make):
    """IVFPQR re-ranks and IVFFlatDedup adds duplicates in their own
    search_preassigned: scanning lists would answer something else."""
    xb, xq = data
    index = make(xb)
    index.train(xb)
    index.add(np.concatenate([xb, xb[:500]]))  # duplicates for Dedup
    index.nprobe = 8
    wrapper = faiss_ccd.IndexIVFCCD(index, pool)
    assert not wrapper.uses_scanners
    D_ref, I_ref = index.search(xq, 10)
    assert_same_results(D_ref, I_ref, *wrapper.search(xq, 10))
    faiss_ccd.set_default_pool(pool)
    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
    try:
        assert_same_results(D_ref, I_ref, *index.search(xq, 10))
    finally:
        index.parallel_mode = 0
        faiss_ccd.set_default_pool(None)


def test_range_search_thresholds(data, pool, ivf_flat):
    _, xq = data
    wrapper = faiss_ccd.IndexIVFCCD(ivf_flat, pool)
    for thresh in (3, np.int64(3), np.float32(3.0), 3.0):
        lims, _, _ = wrapper.range_search(xq, thresh)
        np.testing.assert_array_equal(
            lims, ivf_flat.range_search(xq, 3.0)[0])
    with pytest.raises(ValueError):
        wrapper.range_search(xq, float("nan"))
    with pytest.raises(TypeError):
        wrapper.range_search(xq, True)


def test_fast_scan_falls_back_to_faiss(data, pool):
    _, xq = data
    index = make_ivf("IVF32,PQ8x4fs", data=data)
    wrapper = faiss_ccd.IndexIVFCCD(index, pool)
    assert not wrapper.uses_scanners
    assert_same_results(*index.search(xq, 10), *wrapper.search(xq, 10))


@pytest.mark.parametrize("x,error", [
    ([[0.0] * 24], TypeError),
    (np.zeros((2, 24), np.float64), TypeError),
    (np.zeros((2, 24), np.int32), TypeError),
    (np.zeros((2, 23), np.float32), ValueError),
    (np.zeros(24, np.float32), ValueError),
    (np.zeros((2, 3, 24), np.float32), ValueError),
    (np.zeros((24, 4), np.float32).T, ValueError),
    (np.zeros((4, 48), np.float32)[:, ::2], ValueError),
])
def test_bad_queries(pool, ivf_flat, x, error):
    wrapper = faiss_ccd.IndexIVFCCD(ivf_flat, pool)
    with pytest.raises(error):
        wrapper.search(x, 5)
    with pytest.raises(error):
        wrapper.range_search(x, 1.0)


def test_bad_arguments(data, pool, ivf_flat, hnsw):
    _, xq = data
    wrapper = faiss_ccd.IndexIVFCCD(ivf_flat, pool)
    for k, error in ((0, ValueError), (-3, ValueError), (2.5, TypeError),
                     (True, TypeError), ("5", TypeError)):
        with pytest.raises(error):
            wrapper.search(xq, k)
    with pytest.raises(TypeError):
        wrapper.search(xq, 5, params=faiss.SearchParametersHNSW())
    with pytest.raises(TypeError):
        wrapper.search(xq, 5, params="nprobe=3")
    with pytest.raises(ValueError):
        wrapper.search(xq, 5, D=np.zeros((1, 5), np.float32))
    with pytest.raises(TypeError):
        wrapper.search(xq, 5, I=np.zeros((len(xq), 5), np.int32))
    with pytest.raises(TypeError):
        wrapper.range_search(xq, "far")
    with pytest.raises(TypeError):
        faiss_ccd.IndexIVFCCD(hnsw, pool)
    with pytest.raises(TypeError):
        faiss_ccd.IndexIVFCCD(faiss.IndexFlatL2(24), pool)
    with pytest.raises(TypeError):
        faiss_ccd.IndexIVFCCD(ivf_flat, "pool")
    with pytest.raises(ValueError):
        faiss_ccd.IndexIVFCCD(ivf_flat, pool, table_id=-1)
    with pytest.raises(ValueError):
        faiss_ccd.IndexIVFCCD(ivf_flat, pool, table_id=2**32 - 1)
    # The wrapper still works after all that.
    assert_same_results(*ivf_flat.search(xq, 5), *wrapper.search(xq, 5))


def test_cpp_errors_become_python_errors(data, pool):
    xb, xq = data
    index = faiss.index_factory(xb.shape[1], "IVF32,Flat")
    wrapper = faiss_ccd.IndexIVFCCD(index, pool)
    with pytest.raises(RuntimeError, match="not trained"):
        wrapper.search(xq, 5)
    index.train(xb)
    # Empty: FAISS's own answer, -1 labels.
    D_ref, I_ref = index.search(xq, 5)
    D, I = wrapper.search(xq, 5)
    assert (I == -1).all()
    np.testing.assert_array_equal(D, D_ref)
    lims, _, _ = wrapper.range_search(xq, 1.0)
    assert (lims == 0).all()
    index.add(xb)
    index.nprobe = 4
    assert_same_results(*index.search(xq, 5), *wrapper.search(xq, 5))


def test_wrapper_keeps_index_and_pool_alive(data):
    _, xq = data
    index = make_ivf("IVF32,Flat", data=data)
    D_ref, I_ref = index.search(xq, 10)
    wrapper = faiss_ccd.IndexIVFCCD(index, faiss_ccd.Pool("2x1"))
    with pytest.raises(AttributeError):
        wrapper.pool = None  # what keeps the pool alive is not writable
    with pytest.raises(AttributeError):
        wrapper.index = None
    del index
    gc.collect()
    junk = [np.ones(10**5, np.float32) for _ in range(20)]  # reuse memory
    assert_same_results(D_ref, I_ref, *wrapper.search(xq, 10))
    del junk


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
                        *faiss_ccd.IndexIVFCCD(ivf, pool).search(xt, 10))
