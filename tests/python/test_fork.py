"""fork(): a child process (multiprocessing's fork start method) of a parent
that searched through the CCD pool searches too, and gets the parent's
answers. (Stock FAISS with libgomp hangs there once the parent used its
OpenMP team; the pool starts its workers again in the child.)"""

import multiprocessing

import faiss

from conftest import PARALLEL_MODE_CCD, assert_same_results, cached_ivf

TIMEOUT_S = 120


def _in_a_child(target, *args):
    """Run target(*args, queue) in a forked child; what it put in the
    queue, once the child exited 0 (a string: its error, which fails)."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=target, args=args + (queue,))
    child.start()
    got = queue.get(timeout=TIMEOUT_S)
    child.join(TIMEOUT_S)
    if child.is_alive():
        child.kill()
        raise AssertionError("the child did not exit")
    assert not isinstance(got, str), got
    assert child.exitcode == 0
    return got


def _search_in_child(index, tables, xq, queue):
    try:
        D, I = index.search(xq, 10)
        Dh, Ih = tables.search(0, xq, 10)
        queue.put((D, I, Dh, Ih))
    except BaseException as e:  # reported to the parent, not swallowed
        queue.put(repr(e))


def test_child_searches_after_the_parent_used_the_pool(data, hnsw):
    _, xq = data
    index = cached_ivf("IVF32,Flat")
    index.nprobe = 8
    index.parallel_mode = PARALLEL_MODE_CCD
    pool = faiss.ccd.Pool("1x2")
    tables = faiss.ccd.HNSWTables(pool)
    tables.hand_off = 1  # the child's queries must need the pool's workers
    tables.add_table(0, hnsw)
    try:
        # The parent uses both: its workers exist, then are not copied.
        D, I = index.search(xq, 10)
        Dh, Ih = tables.search(0, xq, 10)
        params = faiss.SearchParametersIVFCCD(nprobe=8, helpers=1)
        assert_same_results(D, I, *index.search(xq, 10, params=params))
        got = _in_a_child(_search_in_child, index, tables, xq)
        assert_same_results(D, I, got[0], got[1])
        assert_same_results(Dh, Ih, got[2], got[3])
        # And the parent's pool still works.
        assert_same_results(Dh, Ih, *tables.search(0, xq, 10))
    finally:
        index.parallel_mode = 0


def _submit_in_child(tables, xq, queue):
    try:
        D, I = tables.submit(0, xq, 10).result(timeout=15)
        queue.put((D, I))
    except BaseException as e:  # reported to the parent, not swallowed
        queue.put(repr(e))


def test_child_futures_complete_after_the_parent_used_submit(data, hnsw):
    """Issue 28, 3: the parent's submit() started faiss.ccd's dispatcher
    thread, which a fork() child does not have; the child's own futures
    must still complete (with the parent's answers)."""
    _, xq = data
    pool = faiss.ccd.Pool("1x2")
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(0, hnsw)
    D, I = tables.submit(0, xq, 10).result(timeout=TIMEOUT_S)
    got = _in_a_child(_submit_in_child, tables, xq)
    assert_same_results(D, I, *got)
    # The parent's dispatcher is untouched.
    assert_same_results(D, I, *tables.submit(0, xq, 10).result(timeout=60))
