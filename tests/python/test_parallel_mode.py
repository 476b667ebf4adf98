"""IndexIVF.parallel_mode = faiss.PARALLEL_MODE_CCD: the issue's acceptance
test.

The mode is the C++ field of the IVF index itself, so it holds wherever
libfaiss searches that index. For every way of holding an IVF index
(IndexIDMap2, IndexPreTransform, IndexRefineFlat, IndexShards, clone_index,
pickle, extract_index_ivf / downcast_index, read_index, the environment) a
search with the IVF inside in the mode:
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
