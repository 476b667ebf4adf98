"""Shared data, indexes and fixtures for the faiss.ccd Python tests.

Fixed seeds; stock FAISS runs with one OpenMP thread as the reference
(with more, FAISS quantizes each thread's slice of a batch separately, which
moves IVFPQ distances in their last bits).

Process-wide state that tests change (the default pool, the default
parallel_mode, the parallel_mode of the session's cached indexes) is put
back after every test by the autouse fixture `restore_ccd_defaults`, so a
failing test cannot leak the CCD mode into the next one.
"""

import os
import subprocess
import sys

import faiss
import numpy as np
import pytest

D = 24
NB = 6000
NQ = 120

PARALLEL_MODE_CCD = faiss.PARALLEL_MODE_CCD


def make_data(seed=123, nb=NB, nq=NQ, d=D):
    rs = np.random.RandomState(seed)
    # Clustered data, so IVF lists differ in size.
    centers = rs.rand(40, d).astype(np.float32) * 4
    xb = centers[rs.randint(0, 40, nb)] + rs.rand(nb, d).astype(np.float32)
    xq = centers[rs.randint(0, 40, nq)] + rs.rand(nq, d).astype(np.float32)
    return np.ascontiguousarray(xb, dtype=np.float32), \
        np.ascontiguousarray(xq, dtype=np.float32)


def ivf_of(index):
    """The IndexIVF inside `index`, as its own class (extract_index_ivf
    returns a plain faiss.IndexIVF proxy)."""
    return faiss.downcast_index(faiss.extract_index_ivf(index))


def make_ivf(description, metric=faiss.METRIC_L2, nprobe=8, data=None):
    xb, _ = data if data is not None else make_data()
    index = faiss.index_factory(xb.shape[1], description, metric)
    ivf = ivf_of(index)
    if isinstance(ivf, faiss.IndexIVFPQ):
        ivf.do_polysemous_training = False
    index.train(xb)
    if isinstance(index, faiss.IndexIDMap):
        index.add_with_ids(xb, np.arange(len(xb), dtype=np.int64) * 3 + 7)
    else:
        index.add(xb)
    ivf.nprobe = nprobe
    return index


_cached = {}
# Indexes that live for the session: restore_ccd_defaults puts their
# parallel_mode back to 0 after every test.
_session_indexes = []


def cached_ivf(description, metric=faiss.METRIC_L2):
    """make_ivf on the default data, built once per session. Tests that
    use it may set nprobe and parallel_mode (put back to 8 and 0 after each
    test), nothing else."""
    key = (description, metric)
    if key not in _cached:
        _cached[key] = make_ivf(description, metric)
        _session_indexes.append(_cached[key])
    return _cached[key]


def tasks_run(pool):
    """The pool's task counter once everything submitted so far has run."""
    pool.wait_idle()
    return pool.stats()["tasks_run"]


def served(pool):
    """Searches the pool served (its callers), whether their thread ran
    them alone or with helpers, plus the tasks it ran."""
    pool.wait_idle()
    stats = pool.stats()
    return stats["callers"] + stats["tasks_run"]


def run_python(code, **env):
    """Run `code` in a fresh interpreter (this one) that imports this same
    faiss build, with `env` added to the environment. Returns the
    CompletedProcess (text output)."""
    faiss_root = os.path.dirname(os.path.dirname(faiss.__file__))
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [faiss_root] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    environment.update(env)
    return subprocess.run([sys.executable, "-c", code], env=environment,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="session", autouse=True)
def one_omp_thread():
    faiss.omp_set_num_threads(1)


@pytest.fixture(autouse=True)
def restore_ccd_defaults():
    """After every test: no default pool of the test's (a fresh one on
    next use), default parallel_mode 0, session indexes in mode 0 with
    nprobe 8."""
    yield
    for index in _session_indexes:
        ivf = ivf_of(index)
        ivf.parallel_mode = 0
        ivf.nprobe = 8
    faiss.ccd.set_default_parallel_mode(0)
    faiss.ccd.set_default_pool(None)


@pytest.fixture(scope="session")
def data():
    return make_data()


@pytest.fixture(scope="session")
def pool():
    """A pool of two CCDs of one worker (this machine's real shape)."""
    return faiss.ccd.Pool("2x1", "ccd")


@pytest.fixture
def default_pool(pool):
    """The session's pool as the default for this test (restored by
    restore_ccd_defaults)."""
    faiss.ccd.set_default_pool(pool)
    return pool


@pytest.fixture(scope="session")
def ivf_flat(data):
    index = make_ivf("IVF32,Flat", data=data)
    _session_indexes.append(index)
    return index


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


def assert_same_range_results(ref, new):
    """Range results (lims, D, I): the same hits per query, in any order."""
    lims_ref, D_ref, I_ref = ref
    lims, D, I = new
    assert lims.dtype == lims_ref.dtype
    np.testing.assert_array_equal(lims, lims_ref)
    for i in range(len(lims) - 1):
        a, b = lims[i], lims[i + 1]
        order, order_ref = np.argsort(I[a:b]), np.argsort(I_ref[a:b])
        np.testing.assert_array_equal(I[a:b][order], I_ref[a:b][order_ref])
        np.testing.assert_allclose(D[a:b][order], D_ref[a:b][order_ref],
                                   rtol=1e-5, atol=1e-5)
