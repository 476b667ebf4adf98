"""faiss.ccd.HNSWTables: results equal stock faiss, futures, errors,
lifetimes."""

import concurrent.futures
import gc

import faiss
import numpy as np
import pytest

from conftest import assert_same_results, tasks_run


def make_hnsw(xb, description="HNSW16", ef=32):
    index = faiss.index_factory(xb.shape[1], description)
    index.hnsw.efSearch = ef
    index.train(xb)  # SQ needs it; flat storage ignores it
    index.add(xb)
    return index


@pytest.fixture(scope="module")
def tables_and_indexes(data, pool):
    xb, _ = data
    indexes = {1: make_hnsw(xb), 2: make_hnsw(xb[::2], "HNSW8,SQ8")}
    tables = faiss.ccd.HNSWTables(pool)
    for table_id, index in indexes.items():
        tables.add_table(table_id, index)
    return tables, indexes


@pytest.mark.parametrize("policy", faiss.ccd.POLICIES)
def test_search_equals_stock(data, policy):
    """A table answers as its index's own search, on the pool, under every
    policy."""
    xb, xq = data
    index = make_hnsw(xb)
    pool = faiss.ccd.Pool("2x1", policy)
    tables = faiss.ccd.HNSWTables(pool)
    assert tables.pool is pool
    assert tables.hand_off == -1
    tables.hand_off = 1  # queries as pool tasks, whatever the topology
    with pytest.raises(ValueError):
        tables.hand_off = 2
    tables.add_table(0, index)
    for k in (1, 10, 50):
        before = tasks_run(pool)
        assert_same_results(*index.search(xq, k), *tables.search(0, xq, k))
        assert tasks_run(pool) > before


def test_many_tables(data, tables_and_indexes):
    """Tables of different codecs on one pool each answer their own."""
    _, xq = data
    tables, indexes = tables_and_indexes
    assert tables.table_ids() == [1, 2] and len(tables) == 2 and 1 in tables
    assert "2 tables" in repr(tables)
    for table_id, index in indexes.items():
        assert_same_results(*index.search(xq, 10),
                            *tables.search(table_id, xq, 10))


def test_ef_search_per_table_and_call(data, pool):
    """efSearch: the table's (add_table) unless the call's params give
    one."""
    xb, xq = data
    index = make_hnsw(xb, ef=64)
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(3, index, ef_search=16)
    params = faiss.SearchParametersHNSW()
    params.efSearch = 16
    assert_same_results(*index.search(xq, 10, params=params),
                        *tables.search(3, xq, 10))
    params.efSearch = 64
    assert_same_results(*index.search(xq, 10),
                        *tables.search(3, xq, 10, params=params))


def test_submit_futures(data, tables_and_indexes):
    """submit() returns concurrent.futures.Futures: one query (shape (k,)),
    a batch, and many singles, all equal to stock."""
    _, xq = data
    tables, indexes = tables_and_indexes
    D_ref, I_ref = indexes[1].search(xq, 10)
    one = tables.submit(1, xq[0], 10)
    batch = tables.submit(1, xq, 10)
    singles = [tables.submit(1, xq[i], 10) for i in range(len(xq))]
    assert isinstance(one, concurrent.futures.Future)
    D1, I1 = one.result(timeout=60)
    assert D1.shape == I1.shape == (10,)
    assert_same_results(D_ref[:1], I_ref[:1], D1[None], I1[None])
    assert_same_results(D_ref, I_ref, *batch.result(timeout=60))
    done, _ = concurrent.futures.wait(singles, timeout=60)
    assert len(done) == len(xq)
    D = np.stack([f.result()[0] for f in singles])
    I = np.stack([f.result()[1] for f in singles])
    assert_same_results(D_ref, I_ref, D, I)


def test_errors(data, pool, tables_and_indexes, ivf_flat):
    """Bad pools, indexes, ids, queries, k and params raise TypeError,
    ValueError or KeyError, and leave the tables working."""
    xb, xq = data
    tables, _ = tables_and_indexes
    with pytest.raises(TypeError):
        faiss.ccd.HNSWTables("pool")
    with pytest.raises(TypeError):
        faiss.ccd.HNSWTables(pool.runtime)  # the Python pool, not its C++
    with pytest.raises(TypeError):
        tables.add_table(9, ivf_flat)
    with pytest.raises(TypeError):
        tables.add_table(9, "index")
    with pytest.raises(ValueError, match="already"):
        tables.add_table(1, make_hnsw(xb[:100]))
    for bad_id in (-1, faiss.ccd.MAX_TABLE_ID + 1):
        with pytest.raises(ValueError):
            tables.add_table(bad_id, make_hnsw(xb[:100]))
    with pytest.raises(TypeError):
        tables.add_table(True, make_hnsw(xb[:100]))
    with pytest.raises(ValueError):
        tables.add_table(9, make_hnsw(xb[:100]), ef_search=0)
    for call in (tables.search, tables.submit):
        with pytest.raises(KeyError):
            call(99, xq, 5)
        with pytest.raises(TypeError):
            call(1, xq.astype(np.float64), 5)
        with pytest.raises(ValueError):
            call(1, xq[:, :3], 5)
        with pytest.raises(ValueError):
            call(1, xq, 0)
        with pytest.raises(TypeError):
            call(1, xq, 5, params=faiss.SearchParametersIVF())
    with pytest.raises(ValueError):
        tables.search(1, xq[0], 5)  # search takes (n, d)
    with pytest.raises(ValueError):
        tables.submit(1, xq[:0], 5)
    with pytest.raises(KeyError):
        tables.remove_table(99)
    # Still fine afterwards.
    assert tables.table_ids() == [1, 2]
    assert tables.search(1, xq[:2], 3)[1].shape == (2, 3)


def test_remove_with_queries_in_flight(data, pool):
    """remove_table() waits for the queries in flight on the table; they
    complete, and the id is unknown afterwards."""
    xb, xq = data
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(5, make_hnsw(xb))
    futures = [tables.submit(5, xq, 10) for _ in range(5)]
    tables.remove_table(5)  # waits for them
    assert 5 not in tables
    for f in futures:
        assert f.result(timeout=60)[1].shape == (len(xq), 10)
    with pytest.raises(KeyError):
        tables.submit(5, xq, 10)


def test_lifetimes(data):
    """Dropping the user's references to the index, the pool and the tables
    crashes nothing: what is still used stays alive."""
    xb, xq = data
    index = make_hnsw(xb)
    D_ref, I_ref = index.search(xq, 10)
    tables = faiss.ccd.HNSWTables(faiss.ccd.Pool("2x1"))
    tables.add_table(1, index)
    del index
    gc.collect()
    junk = [np.ones(10**5, np.float32) for _ in range(20)]
    assert_same_results(D_ref, I_ref, *tables.search(1, xq, 10))
    futures = [tables.submit(1, xq, 10) for _ in range(4)]
    del tables, junk
    gc.collect()
    for f in futures:
        assert_same_results(D_ref, I_ref, *f.result(timeout=60))


def test_queries_keep_their_index_alive(data, pool):
    """The pool lives on (a session fixture): dropping the tables and the
    index with futures pending must not free the index under them."""
    xb, xq = data
    index = make_hnsw(xb)
    D_ref, I_ref = index.search(xq, 10)
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(1, index)
    many = np.ascontiguousarray(np.tile(xq, (20, 1)))
    futures = [tables.submit(1, many, 10) for _ in range(4)]
    del tables, index
    gc.collect()
    junk = [np.ones(10**5, np.float32) for _ in range(50)]
    for f in futures:
        D, I = f.result(timeout=120)
        assert_same_results(D_ref, I_ref, D[:len(xq)], I[:len(xq)])
    del junk


def test_remove_table_lets_others_run(data, pool):
    """Removing a table with queries in flight frees its id at once for a
    new table; the queries complete."""
    xb, xq = data
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(1, make_hnsw(xb))
    tables.add_table(2, make_hnsw(xb[:1000]))
    futures = [tables.submit(1, xq, 10) for _ in range(10)]
    tables.remove_table(1)
    tables.add_table(1, make_hnsw(xb[:500]))  # the id is free again
    assert tables.table_ids() == [1, 2]
    assert all(f.result(timeout=60)[0].shape == (len(xq), 10)
               for f in futures)


def test_close_before_any_submit(data, pool):
    """close() before any submit(): submit() then refuses."""
    xb, xq = data
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(1, make_hnsw(xb[:500]))
    tables.close()
    with pytest.raises(RuntimeError, match="closed"):
        tables.submit(1, xq, 5)


def test_close_refuses_new_work(data, pool):
    """close(): futures already returned complete, submit() refuses,
    search() keeps working."""
    xb, xq = data
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(1, make_hnsw(xb[:500]))
    f = tables.submit(1, xq, 5)
    tables.close()
    assert f.result(timeout=60)[0].shape == (len(xq), 5)
    with pytest.raises(RuntimeError, match="closed"):
        tables.submit(1, xq, 5)
    assert tables.search(1, xq, 5)[0].shape == (len(xq), 5)


def test_submit_keeps_a_dropped_selector_alive(data, hnsw):
    """Issue 28, kept: a selector passed through SearchParametersHNSW to
    submit() stays valid until the future completes, though the caller
    drops its parameters and selector at once."""
    _, xq = data
    pool = faiss.ccd.Pool("1x2")
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(0, hnsw)
    ids = np.arange(0, hnsw.ntotal, 3, dtype="int64")
    reference = hnsw.search(
        xq, 10, params=faiss.SearchParametersHNSW(
            sel=faiss.IDSelectorBatch(ids), efSearch=hnsw.hnsw.efSearch))
    futures = [tables.submit(0, xq, 10, params=faiss.SearchParametersHNSW(
        sel=faiss.IDSelectorBatch(ids), efSearch=hnsw.hnsw.efSearch))
        for _ in range(6)]
    gc.collect()
    for future in futures:
        D, I = future.result(timeout=120)
        assert (I[I >= 0] % 3 == 0).all()
        assert_same_results(*reference, D, I)
