"""Shared data and indexes for the faiss_ccd Python tests.

Fixed seeds; stock FAISS runs with one OpenMP thread as the reference
(with more, FAISS quantizes each thread's slice of a batch separately, which
moves IVFPQ distances in their last bits).
"""

import functools

import faiss
import numpy as np
import pytest

import faiss_ccd

D = 24
NB = 6000
NQ = 120


def make_data(seed=123, nb=NB, nq=NQ, d=D):
    rs = np.random.RandomState(seed)
    # Clustered data, so IVF lists differ in size.
    centers = rs.rand(40, d).astype(np.float32) * 4
    xb = centers[rs.randint(0, 40, nb)] + rs.rand(nb, d).astype(np.float32)
    xq = centers[rs.randint(0, 40, nq)] + rs.rand(nq, d).astype(np.float32)
    return np.ascontiguousarray(xb, dtype=np.float32), \
        np.ascontiguousarray(xq, dtype=np.float32)


def make_ivf(description, metric=faiss.METRIC_L2, nprobe=8, data=None):
    xb, _ = data if data is not None else make_data()
    index = faiss.index_factory(xb.shape[1], description, metric)
    ivf = faiss.extract_index_ivf(index)
    if isinstance(ivf, faiss.IndexIVFPQ):
        ivf.do_polysemous_training = False
    index.train(xb)
    index.add(xb)
    ivf.nprobe = nprobe
    return index


@functools.lru_cache(maxsize=None)
def cached_ivf(description, metric=faiss.METRIC_L2):
    """make_ivf on the default data, built once per session. Tests that
    use it may set nprobe, nothing else."""
    return make_ivf(description, metric)


@pytest.fixture(scope="session", autouse=True)
def one_omp_thread():
    faiss.omp_set_num_threads(1)


@pytest.fixture(scope="session")
def data():
    return make_data()


@pytest.fixture(scope="session")
def pool():
    """A pool of two CCDs of one worker (this machine's real shape)."""
    return faiss_ccd.Pool("2x1", "ccd")


@pytest.fixture(scope="session")
def ivf_flat(data):
    return make_ivf("IVF32,Flat", data=data)


@pytest.fixture(scope="session")
def hnsw(data):
    xb, _ = data
    index = faiss.IndexHNSWFlat(xb.shape[1], 16)
    index.hnsw.efSearch = 32
    index.add(xb)
    return index


def assert_same_results(D_ref, I_ref, D_new, I_new):
    """Same distances; same labels except among exactly tied distances
    (within the k results, or with the k-th one: a tie just beyond k)."""
    np.testing.assert_allclose(D_new, D_ref, rtol=1e-5, atol=1e-5)
    mismatch = I_new != I_ref
    for i, j in zip(*np.nonzero(mismatch)):
        tied = (D_ref[i] == D_ref[i, j]).sum() > 1 or \
            D_ref[i, j] == D_ref[i, -1]
        assert tied, (i, j, D_ref[i], I_ref[i], I_new[i])
