"""Many Python threads at once (the GIL is released during searches), and
no memory growth over many calls, for every way of reaching the pool: the
IndexIVFCCD wrapper, SearchParametersIVFCCD, PARALLEL_MODE_CCD (plain and
inside IndexIDMap2) and HNSWTables."""

import os
import resource
import threading
import time

import faiss
import numpy as np
import pytest

from conftest import (PARALLEL_MODE_CCD, assert_same_results, cached_ivf,
                      ivf_of, make_ivf)


def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def test_eight_threads(data, pool, hnsw):
    """Eight Python threads mix wrapper, params, mode, composite-in-mode
    and HNSW searches on one pool: every answer equals stock on the same
    batch (IVFPQ distances depend on the batch through the coarse
    quantizer's BLAS threshold, so the references are per batch) and no
    thread hangs."""
    _, xq = data
    ivf = cached_ivf("IVF32,Flat")
    wrapper = faiss.IndexIVFCCD(ivf, pool.runtime, 11)
    params = faiss.SearchParametersIVFCCD(nprobe=8, runtime=pool.runtime,
                                          table_id=12)
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(4, hnsw)
    moded = cached_ivf("IVF32,SQ8")
    idmap = make_ivf("IDMap2,IVF32,PQ8x4", data=data)
    stock = {"ivf": ivf, "params": ivf, "hnsw": hnsw, "mode": moded,
             "idmap": idmap}
    kinds = sorted(stock)

    # Each thread's calls, and stock's answers to them, before any mode.
    plans = []
    for t in range(8):
        rs = np.random.RandomState(t)
        plan = []
        for _ in range(30):
            rows = np.sort(rs.choice(len(xq), 17, replace=False))
            q = np.ascontiguousarray(xq[rows])
            kind = kinds[rs.randint(len(kinds))]
            plan.append((kind, q, stock[kind].search(q, 10)))
        plans.append(plan)

    faiss.ccd.set_default_pool(pool)
    moded.parallel_mode = PARALLEL_MODE_CCD
    ivf_of(idmap).parallel_mode = PARALLEL_MODE_CCD
    errors = []

    def client(plan):
        try:
            for kind, q, ref in plan:
                if kind == "ivf":
                    D, I = wrapper.search(q, 10)
                elif kind == "params":
                    D, I = ivf.search(q, 10, params=params)
                elif kind == "hnsw":
                    D, I = tables.search(4, q, 10)
                elif kind == "mode":
                    D, I = moded.search(q, 10)
                else:
                    D, I = idmap.search(q, 10)
                assert_same_results(*ref, D, I)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=client, args=(plan,))
               for plan in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[0]


@pytest.mark.parametrize("how", ["wrapper", "mode", "params"])
def test_gil_is_released_during_search(data, pool, how):
    """While one thread is inside a long search, another keeps running
    Python code. Were the GIL held, the counter would stand still for the
    whole C++ call."""
    _, xq = data
    ivf = cached_ivf("IVF32,Flat")
    ivf.nprobe = 32
    faiss.ccd.set_default_pool(pool)
    if how == "wrapper":
        wrapper = faiss.IndexIVFCCD(ivf, pool.runtime)
        search = wrapper.search
    elif how == "mode":
        ivf.parallel_mode = PARALLEL_MODE_CCD
        search = ivf.search
    else:
        params = faiss.SearchParametersIVFCCD(nprobe=32, runtime=pool.runtime)

        def search(x, k):
            return ivf.search(x, k, params=params)
    many = np.ascontiguousarray(np.tile(xq, (40, 1)))
    inside = threading.Event()
    done = threading.Event()

    def searcher():
        inside.set()
        search(many, 100)
        done.set()

    counts = []
    for _ in range(3):
        inside.clear()
        done.clear()
        t = threading.Thread(target=searcher)
        t.start()
        inside.wait()
        time.sleep(0.001)  # let it enter C++
        count = 0
        while not done.is_set():
            count += 1
        t.join()
        counts.append(count)
    ivf.nprobe = 8
    # Python's switch interval (5 ms) would let a GIL-holding C++ call
    # finish before the counter moved at all.
    assert max(counts) > 100, counts


@pytest.mark.skipif(os.environ.get("FAISS_CCD_UNDER_ASAN") == "1",
                    reason="ASan's quarantine grows the heap by design")
def test_no_memory_growth(data, hnsw):
    """No monitor: its windows fill up over their first seconds (about
    2 MB here over 10 s of searches, then flat), which is bounded growth,
    not a leak, but would hide one."""
    _, xq = data
    pool = faiss.ccd.Pool("2x1", monitor=False)
    ivf = cached_ivf("IVF32,Flat")
    ivf.nprobe = 4
    wrapper = faiss.IndexIVFCCD(ivf, pool.runtime)
    params = faiss.SearchParametersIVFCCD(nprobe=4, runtime=pool.runtime)
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(8, hnsw)
    faiss.ccd.set_default_pool(pool)
    moded = cached_ivf("IVF32,SQ8")
    moded.nprobe = 4
    moded.parallel_mode = PARALLEL_MODE_CCD
    q = np.ascontiguousarray(xq[:2])

    def calls(n):
        for i in range(n):
            wrapper.search(q, 5)
            moded.search(q, 5)
            ivf.search(q, 5, params=params)
            if i % 4 == 0:
                wrapper.range_search(q, 1.0)
                moded.range_search(q, 1.0)
                tables.search(8, q, 5)
                tables.submit(8, q[0], 5).result(timeout=60)
            if i % 50 == 0:
                faiss.IndexIVFCCD(ivf, pool.runtime).search(q, 5)
                faiss.SearchParametersIVFCCD(nprobe=4, runtime=pool.runtime,
                                             sel=faiss.IDSelectorRange(0, 9))
                pool.stats()

    calls(2000)  # warm up: allocator caches, lazy handles
    before = rss_kb()
    calls(10000)
    growth = rss_kb() - before
    ivf.nprobe = 8
    # A leak of 50 bytes per call would show as ~500 KiB here.
    assert growth < 512, f"RSS grew by {growth} KiB over 10^4 calls"
