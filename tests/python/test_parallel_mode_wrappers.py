"""PARALLEL_MODE_CCD through every way of holding an IVF index
(IndexIDMap2, IndexPreTransform, IndexRefineFlat, IndexShards, clone_index,
pickle, extract_index_ivf / downcast_index, read_index) and the default
mode new and loaded indexes take (set_default_parallel_mode, the
environment): a search with the IVF inside in the mode answers as
parallel_mode 0 of the same build and runs on the pool. (The plain index,
the default pool and what the pool does not serve: test_parallel_mode.py.)
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


def check_served(index, ivfs, xq, pool, k=10):
    """Search `index` with every IVF of `ivfs` (inside it) in mode 0, then
    all in PARALLEL_MODE_CCD: the same answers, and the second on `pool`.
    Leaves them in the CCD mode."""
    for ivf in ivfs:
        ivf.parallel_mode = 0
    before = served(pool)
    D_ref, I_ref = index.search(xq, k)
    assert served(pool) == before, "mode 0 used the pool"
    for ivf in ivfs:
        ivf.parallel_mode = PARALLEL_MODE_CCD
        assert ivf.parallel_mode == PARALLEL_MODE_CCD
    D, I = index.search(xq, k)
    assert served(pool) > before, "the CCD mode did not run on the pool"
    assert_same_results(D_ref, I_ref, D, I)
    return D_ref, I_ref


# ------------------------------------------- through what holds the IVF

def test_through_index_id_map2(data, default_pool):
    """IndexIDMap2 over an IVF in the mode: its C++ search of the IVF runs
    on the pool, and the ids come back mapped."""
    xb, xq = data
    ids = np.arange(len(xb), dtype=np.int64) * 3 + 7
    idmap = faiss.IndexIDMap2(faiss.index_factory(xb.shape[1], "IVF32,Flat"))
    idmap.train(xb)
    idmap.add_with_ids(xb, ids)
    inner = ivf_of(idmap)
    inner.nprobe = 8
    _, I = check_served(idmap, [inner], xq, default_pool)
    assert np.isin(I[I >= 0], ids).all()
    before = served(default_pool)
    idmap.range_search(xq, 1.0)
    assert served(default_pool) > before


@pytest.fixture(scope="module")
def opq_ivfpq(data):
    """index_factory "OPQ8,IVF32,PQ8x4": an IndexPreTransform (OPQ) over an
    IVFPQ. 4-bit codes and a short OPQ training (its own 4-bit PQ, 4
    iterations): 8-bit ones take most of a minute on one thread."""
    xb, _ = data
    index = faiss.index_factory(xb.shape[1], "OPQ8,IVF32,PQ8x4")
    opq = faiss.downcast_VectorTransform(index.chain.at(0))
    opq.niter = 4
    opq_pq = faiss.ProductQuantizer(xb.shape[1], 8, 4)
    opq.pq = opq_pq
    ivf = ivf_of(index)
    ivf.do_polysemous_training = False
    index.train(xb[:3000])
    index.add(xb)
    ivf.nprobe = 8
    yield index
    del opq_pq


def test_through_index_pre_transform(data, default_pool, opq_ivfpq):
    """IndexPreTransform (OPQ) over an IVFPQ in the mode: the transformed
    queries are scanned on the pool, with stock's answers."""
    _, xq = data
    index = opq_ivfpq
    assert isinstance(index, faiss.IndexPreTransform)
    ivf = ivf_of(index)
    assert isinstance(ivf, faiss.IndexIVFPQ)
    try:
        check_served(index, [ivf], xq, default_pool)
    finally:
        ivf.parallel_mode = 0


def test_through_index_refine_flat(data, default_pool):
    """IndexRefineFlat over an IVFPQ in the mode: the k * k_factor
    candidates come from the pool, the exact re-ranking is stock's."""
    xb, xq = data
    base = faiss.index_factory(xb.shape[1], "IVF32,PQ8x4")
    ivf = faiss.downcast_index(base)
    ivf.do_polysemous_training = False
    base.train(xb)
    refine = faiss.IndexRefineFlat(base)
    refine.add(xb)
    refine.k_factor = 4
    ivf.nprobe = 8
    inner = faiss.downcast_index(refine.base_index)
    check_served(refine, [inner], xq, default_pool)
    assert ivf.parallel_mode == PARALLEL_MODE_CCD  # one C++ object


def test_through_index_shards(data, default_pool):
    """A threaded IndexShards of two IVF shards, each in the mode: both
    shards' scans run on the one default pool at once."""
    xb, xq = data
    trained = faiss.index_factory(xb.shape[1], "IVF32,Flat")
    trained.train(xb)
    shards = faiss.IndexShards(xb.shape[1], True, True)
    parts = []
    for half in (xb[:3000], xb[3000:]):
        part = faiss.clone_index(trained)
        part.add(half)
        part.nprobe = 8
        shards.add_shard(part)
        parts.append(part)
    assert shards.ntotal == len(xb)
    _, I = check_served(shards, parts, xq, default_pool)
    assert (I >= 3000).any() and ((I >= 0) & (I < 3000)).any()
    assert all(faiss.downcast_index(shards.at(i)).parallel_mode ==
               PARALLEL_MODE_CCD for i in range(2))


def test_through_clone_index(data, default_pool, opq_ivfpq):
    """clone_index copies the mode with the IVF, plain or wrapped; the
    clone is searched on the pool, and the original keeps its own mode."""
    _, xq = data
    ivf = ivf_of(opq_ivfpq)
    D_ref, I_ref = opq_ivfpq.search(xq, 10)
    ivf.parallel_mode = PARALLEL_MODE_CCD
    try:
        clone = faiss.clone_index(opq_ivfpq)
    finally:
        ivf.parallel_mode = 0
    assert ivf_of(clone).parallel_mode == PARALLEL_MODE_CCD
    assert ivf.parallel_mode == 0
    before = served(default_pool)
    assert_same_results(D_ref, I_ref, *clone.search(xq, 10))
    assert served(default_pool) > before

    plain = cached_ivf("IVF32,SQ8")
    plain.parallel_mode = PARALLEL_MODE_CCD
    clone = faiss.clone_index(plain)
    assert clone.parallel_mode == PARALLEL_MODE_CCD
    check_served(clone, [clone], xq, default_pool)


def test_through_pickle(data, default_pool, opq_ivfpq):
    """faiss 1.7.3 pickles indexes (through serialize_index). FAISS's
    format has no field for parallel_mode, so a loaded IVF starts in the
    default mode: 0 by default; the CCD mode once
    set_default_parallel_mode(PARALLEL_MODE_CCD), and then the unpickled
    index is searched on the pool with the original's answers."""
    _, xq = data
    ivf = ivf_of(opq_ivfpq)
    D_ref, I_ref = opq_ivfpq.search(xq, 10)
    ivf.parallel_mode = PARALLEL_MODE_CCD
    try:
        blob = pickle.dumps(opq_ivfpq)
    finally:
        ivf.parallel_mode = 0
    loaded = pickle.loads(blob)
    assert isinstance(loaded, faiss.IndexPreTransform)
    assert ivf_of(loaded).parallel_mode == 0

    faiss.ccd.set_default_parallel_mode(PARALLEL_MODE_CCD)
    loaded = pickle.loads(blob)
    assert ivf_of(loaded).parallel_mode == PARALLEL_MODE_CCD
    before = served(default_pool)
    assert_same_results(D_ref, I_ref, *loaded.search(xq, 10))
    assert served(default_pool) > before


def test_extract_and_downcast_share_the_field(data, default_pool):
    """The mode set through one Python object of an IVF is seen through
    every other one (extract_index_ivf, downcast_index of the wrapper's
    .index) and holds across searches."""
    xb, xq = data
    index = make_ivf("IDMap2,IVF32,Flat", data=data)
    extracted = faiss.extract_index_ivf(index)
    D_ref, I_ref = index.search(xq, 10)
    extracted.parallel_mode = PARALLEL_MODE_CCD
    downcast = faiss.downcast_index(index.index)
    assert isinstance(downcast, faiss.IndexIVFFlat)
    assert downcast is not extracted  # two Python objects, one C++ index
    assert downcast.parallel_mode == PARALLEL_MODE_CCD
    for _ in range(2):
        before = served(default_pool)
        assert_same_results(D_ref, I_ref, *index.search(xq, 10))
        assert served(default_pool) > before
        assert downcast.parallel_mode == PARALLEL_MODE_CCD
        assert faiss.extract_index_ivf(index).parallel_mode == \
            PARALLEL_MODE_CCD
    downcast.parallel_mode = 0
    assert extracted.parallel_mode == 0
    before = served(default_pool)
    index.search(xq, 10)
    assert served(default_pool) == before


@pytest.mark.parametrize("how", ["file", "serialize"])
def test_loaded_indexes_take_the_default_mode(data, default_pool, tmp_path,
                                              how):
    """read_index / deserialize_index make IVF indexes in the default mode
    (set_default_parallel_mode): in the CCD mode they search on the pool
    with the saved index's answers; in the default 0 they do not."""
    xb, xq = data
    index = make_ivf("IDMap2,IVF32,SQ8", data=data)
    D_ref, I_ref = index.search(xq, 10)
    path = str(tmp_path / "index.faiss")

    def load():
        if how == "file":
            faiss.write_index(index, path)
            return faiss.read_index(path)
        return faiss.deserialize_index(faiss.serialize_index(index))

    assert ivf_of(load()).parallel_mode == 0
    faiss.ccd.set_default_parallel_mode(PARALLEL_MODE_CCD)
    assert faiss.ccd.get_default_parallel_mode() == PARALLEL_MODE_CCD
    loaded = load()
    assert isinstance(loaded, faiss.IndexIDMap2)
    assert ivf_of(loaded).parallel_mode == PARALLEL_MODE_CCD
    assert index.index is not None and ivf_of(index).parallel_mode == 0
    before = served(default_pool)
    assert_same_results(D_ref, I_ref, *loaded.search(xq, 10))
    assert served(default_pool) > before
    faiss.ccd.set_default_parallel_mode(0)
    assert ivf_of(load()).parallel_mode == 0


def test_default_mode_for_new_indexes(data, default_pool):
    """set_default_parallel_mode: IVF indexes made afterwards (factory,
    constructors) start in it; existing ones keep theirs; 0 again
    restores FAISS's default."""
    xb, xq = data
    before_index = faiss.index_factory(xb.shape[1], "IVF32,Flat")
    faiss.ccd.set_default_parallel_mode(PARALLEL_MODE_CCD)
    made = [faiss.index_factory(xb.shape[1], "IVF32,Flat"),
            faiss.IndexIVFFlat(faiss.IndexFlatL2(xb.shape[1]),
                               xb.shape[1], 32),
            faiss.IndexIVFScalarQuantizer(
                faiss.IndexFlatL2(xb.shape[1]), xb.shape[1], 32,
                faiss.ScalarQuantizer.QT_8bit)]
    assert before_index.parallel_mode == 0
    for index in made:
        assert index.parallel_mode == PARALLEL_MODE_CCD
    index = made[0]
    index.train(xb)
    index.add(xb)
    index.nprobe = 8
    check_served(index, [index], xq, default_pool)
    faiss.ccd.set_default_parallel_mode(0)
    assert faiss.index_factory(xb.shape[1], "IVF32,Flat").parallel_mode == 0


ENV_CHILD = textwrap.dedent("""
    import json, faiss, numpy as np
    faiss.omp_set_num_threads(1)
    out = {"default": faiss.ccd.get_default_parallel_mode()}
    index = faiss.index_factory(24, "IDMap2,IVF16,Flat")
    ivf = faiss.extract_index_ivf(index)
    out["mode"] = ivf.parallel_mode
    rs = np.random.RandomState(7)
    xb = rs.rand(2000, 24).astype("float32")
    xq = rs.rand(30, 24).astype("float32")
    index.train(xb)
    index.add_with_ids(xb, np.arange(2000, dtype="int64"))
    ivf.nprobe = 4
    pool = faiss.ccd.get_default_pool()
    pool.wait_idle()
    before = pool.stats()["callers"]
    D, I = index.search(xq, 10)
    pool.wait_idle()
    out["tasks"] = pool.stats()["callers"] - before  # searches it served
    ivf.parallel_mode = 0
    D0, I0 = index.search(xq, 10)
    out["same"] = bool((I == I0).all() and np.allclose(D, D0, atol=1e-5))
    out["flat_ok"] = faiss.IndexFlatL2(24).d == 24
    print(json.dumps(out))
""")


def test_environment_variable():
    """FAISS_CCD_PARALLEL_MODE=ccd: in a fresh process, factory-made IVF
    indexes start in PARALLEL_MODE_CCD, search on the default pool and
    answer as mode 0."""
    result = run_python(ENV_CHILD, FAISS_CCD_PARALLEL_MODE="ccd")
    assert result.returncode == 0, result.stderr[-2000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out == {"default": PARALLEL_MODE_CCD, "mode": PARALLEL_MODE_CCD,
                   "tasks": out["tasks"], "same": True, "flat_ok": True}
    assert out["tasks"] > 0


@pytest.mark.parametrize("value,mode", [("", 0), ("0", 0), ("CCD", 65536),
                                        ("65536", 65536), ("3", 3)])
def test_environment_variable_values(value, mode):
    """The variable takes "ccd" / "CCD" or a mode number; empty is 0."""
    code = ("import faiss; "
            "print(faiss.index_factory(8, 'IVF4,Flat').parallel_mode)")
    result = run_python(code, FAISS_CCD_PARALLEL_MODE=value)
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout.split()[-1]) == mode


@pytest.mark.parametrize("value", ["bogus", "7", "-1", "65536x"])
def test_bad_environment_variable(value):
    """A bad FAISS_CCD_PARALLEL_MODE: import works, other indexes work, and
    making an IVF index raises a RuntimeError naming the variable (no
    abort), until set_default_parallel_mode fixes the default."""
    code = textwrap.dedent("""
        import faiss
        assert faiss.IndexFlatL2(8).d == 8
        try:
            faiss.index_factory(8, "IVF4,Flat")
        except RuntimeError as e:
            print("refused:", e)
        else:
            raise SystemExit("made an IVF index")
        faiss.ccd.set_default_parallel_mode(0)
        assert faiss.index_factory(8, "IVF4,Flat").parallel_mode == 0
    """)
    result = run_python(code, FAISS_CCD_PARALLEL_MODE=value)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    assert "refused:" in result.stdout
    assert "FAISS_CCD_PARALLEL_MODE" in result.stdout or \
        "not supported" in result.stdout
