"""What tests/python/test_bad_input.py's table needs: the module's data,
indexes, pool and tables (env, made on first use), fresh objects, the
comparison of an answer with stock FAISS's, the child interpreter that
runs the calls that could take the process down, and the multi-step
callables of the table's rows (bad_input_cases_*.py).
"""

import builtins
import collections
import gc
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
import types

import faiss
import numpy as np
import pytest
from faiss.contrib.ccd import datasets, evaluation, loadgen, report

from conftest import (PARALLEL_MODE_CCD, assert_same_range_results,
                      assert_same_results)

D = 16
K = 5
UINT32_MAX = 0xFFFFFFFF

# ------------------------------------------------------------ environment

_env = None


def env():
    """The module's data, indexes, pool and tables, made on first use (the
    table's callables run after collection, when the conftest fixtures have
    set one OpenMP thread)."""
    global _env
    if _env is None:
        rs = np.random.RandomState(1234)
        xb = rs.rand(2000, D).astype(np.float32)
        xq = rs.rand(8, D).astype(np.float32)
        ivf = faiss.IndexIVFFlat(faiss.IndexFlatL2(D), D, 16)
        ivf.train(xb)
        ivf.add(xb)
        ivf.nprobe = 4
        hnsw = faiss.IndexHNSWFlat(D, 8)
        hnsw.hnsw.efSearch = 32
        hnsw.add(xb)
        pool = faiss.ccd.Pool("2x1", "ccd")
        tables = faiss.ccd.HNSWTables(pool)
        tables.add_table(1, hnsw)
        # Queries with NaN and infinite components, and two plain ones.
        special = xq.copy()
        special[0, 3] = np.nan
        special[1, :] = np.nan
        special[2, 0] = np.inf
        special[3, 5] = -np.inf
        special[4, :] = np.inf
        special[5, :] = -np.inf
        _env = types.SimpleNamespace(
            xb=xb, xq=xq, special=special, ivf=ivf, hnsw=hnsw, pool=pool,
            tables=tables,
            wrapper=faiss.IndexIVFCCD(ivf, pool.runtime, 3),
            ivf_ref=ivf.search(xq, K), hnsw_ref=hnsw.search(xq, K))
    return _env


def fresh_ivf(trained=True):
    e = env()
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatL2(D), D, 16)
    if trained:
        ivf.train(e.xb)
        ivf.add(e.xb)
        ivf.nprobe = 4
    return ivf


def fresh_tables(pool=None, table_id=1):
    tables = faiss.ccd.HNSWTables(pool or env().pool)
    tables.add_table(table_id, env().hnsw)
    return tables


def ccd_params(**kw):
    kw.setdefault("nprobe", 4)
    kw.setdefault("runtime", env().pool.runtime)
    return faiss.SearchParametersIVFCCD(**kw)


class ccd_mode:
    """with ccd_mode(index, mode): index.parallel_mode = mode (the CCD
    mode by default) inside, 0 again after, whatever happens."""

    def __init__(self, index, mode=PARALLEL_MODE_CCD):
        self.index, self.mode = index, mode

    def __enter__(self):
        self.index.parallel_mode = self.mode
        return self.index

    def __exit__(self, *exc):
        self.index.parallel_mode = 0


# ------------------------------------------------- comparison with stock

def _outcome(call):
    try:
        return True, call()
    except Exception as e:  # noqa: BLE001 -- compared with stock's below
        return False, e


def assert_same_answers(ref, new):
    """Two search results (D, I) or range results (lims, D, I), equal as
    FAISS's own tests take them; NaN where stock has NaN."""
    if len(ref) == 3:
        assert_same_range_results(ref, new)
    else:
        assert_same_results(*ref, *new)


def same_as_stock(stock, ccd):
    """The CCD call answers what the stock call answers, or raises the
    same exception type (the CCD path must not change FAISS's behaviour on
    odd input, only add clear errors where FAISS has none)."""
    ok_ref, ref = _outcome(stock)
    ok_new, new = _outcome(ccd)
    assert ok_ref == ok_new, f"stock: {ref!r}; CCD: {new!r}"
    if ok_ref:
        assert_same_answers(ref, new)
    else:
        assert type(new) is type(ref), f"stock: {ref!r}; CCD: {new!r}"


def ivf_same_as_stock(call, index=None):
    """call(index) in parallel_mode 0, then in the CCD mode."""
    index = index or env().ivf
    assert index.parallel_mode == 0

    def in_ccd_mode():
        with ccd_mode(index):
            return call(index)

    same_as_stock(lambda: call(index), in_ccd_mode)


def hnsw_same_as_stock(x, k=K, tables=None, table_id=1):
    """HNSWTables.search for each hand_off, and submit() query by query,
    equal to stock IndexHNSW.search (one OpenMP thread, as conftest
    sets)."""
    e = env()
    tables = tables or e.tables
    ref = e.hnsw.search(x, k)
    saved = tables.hand_off
    try:
        for hand_off in (-1, 0, 1):
            tables.hand_off = hand_off
            assert_same_answers(ref, tables.search(table_id, x, k))
    finally:
        tables.hand_off = saved
    futures = [tables.submit(table_id, row, k) for row in x]
    got = [f.result(timeout=60) for f in futures]
    assert_same_answers(ref, (np.stack([d for d, _ in got]),
                              np.stack([i for _, i in got])))


def check_pool_serves():
    """The module's pool and the default one answer as stock FAISS."""
    e = env()
    assert e.ivf.parallel_mode == 0 and e.ivf.nprobe == 4
    with ccd_mode(e.ivf):
        assert_same_answers(e.ivf_ref, e.ivf.search(e.xq, K))
    assert_same_answers(e.ivf_ref, e.ivf.search(e.xq, K, params=ccd_params()))
    assert_same_answers(e.ivf_ref, e.wrapper.search(e.xq, K))
    assert e.tables.hand_off == -1
    assert_same_answers(e.hnsw_ref, e.tables.search(1, e.xq, K))
    d, i = e.tables.submit(1, e.xq[0], K).result(timeout=60)
    assert_same_answers((e.hnsw_ref[0][:1], e.hnsw_ref[1][:1]),
                        (d[None], i[None]))


# ------------------------------------------------------------- children

UNDER_ASAN = os.environ.get("FAISS_CCD_UNDER_ASAN") == "1"

CHILD_PRELUDE = """
import os, resource, sys, json
limit = {memory}
if limit and not os.environ.get("FAISS_CCD_UNDER_ASAN"):
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
if {nproc}:
    resource.setrlimit(resource.RLIMIT_NPROC, ({nproc}, {nproc}))
import faiss, numpy as np
faiss.omp_set_num_threads(1)
rs = np.random.RandomState(1234)
xb = rs.rand(2000, {d}).astype(np.float32)
xq = rs.rand(8, {d}).astype(np.float32)
ivf = faiss.IndexIVFFlat(faiss.IndexFlatL2({d}), {d}, 16)
ivf.train(xb)
ivf.add(xb)
ivf.nprobe = 4
"""

CHILD_BODY = """
try:
{body}
except BaseException as e:
    print(json.dumps({{"type": type(e).__name__, "message": str(e)}}))
else:
    print(json.dumps({{"type": None}}))
"""


def _user_tasks():
    """Threads of this user on the machine now (RLIMIT_NPROC counts
    them all)."""
    uid, n = os.getuid(), 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return n


def in_child(body, timeout=20, memory_gib=2, threads=None):
    """Run `body` in a fresh interpreter (with faiss, np, ivf, xb and xq
    made as above), its address space bounded to memory_gib (under ASan,
    which reserves terabytes of it, its RSS instead) and, with `threads`,
    at most that many more threads than this user has now (RLIMIT_NPROC,
    which binds no root process: there the address space bounds the
    threads' stacks). The exception
    the body raises is raised again here (a builtin type as itself, any
    other as RuntimeError), with its message. A child that dies or is
    still running after `timeout` seconds is an AssertionError that says
    so: a crash or a hang."""
    faiss_root = os.path.dirname(os.path.dirname(faiss.__file__))
    environ = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    environ["PYTHONPATH"] = os.pathsep.join(
        [faiss_root] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    if UNDER_ASAN:
        environ["ASAN_OPTIONS"] = ":".join(
            [o for o in [os.environ.get("ASAN_OPTIONS")] if o] +
            [f"hard_rss_limit_mb={memory_gib * 1024}"])
    if threads and UNDER_ASAN and os.getuid() == 0:
        # RLIMIT_NPROC does not bind root, and ASan needs RLIMIT_AS free.
        pytest.skip("nothing bounds a child's threads under ASan as root")
    nproc = _user_tasks() + threads if threads else 0
    code = CHILD_PRELUDE.format(memory=memory_gib << 30, nproc=nproc, d=D) + \
        CHILD_BODY.format(body=textwrap.indent(textwrap.dedent(body), "    "))
    try:
        done = subprocess.run([sys.executable, "-c", code], env=environ,
                              capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"no answer after {timeout} s (a hang):\n{body}") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise AssertionError(
            f"the child died (exit status {done.returncode}):\n{body}\n"
            f"{done.stderr[-2000:]}")
    result = json.loads(lines[-1])
    if result["type"] is None:
        return None
    cls = getattr(builtins, result["type"], None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        cls = RuntimeError
    raise cls(result["message"])


# --------------------------------------------------- multi-step callables

def set_attr(obj, name, value):
    setattr(obj, name, value)


def search_in_mode(mode, call=lambda ivf: ivf.search(env().xq, K)):
    with ccd_mode(env().ivf, mode) as ivf:
        return call(ivf)


def pool_empty_spec_is_auto():
    """"" (and blanks) is "auto": the documented alias, asserted by
    test_pool.py too."""
    auto = faiss.ccd.Pool("auto")
    for spec in ("", "  "):
        pool = faiss.ccd.Pool(spec)
        assert (pool.num_workers, pool.num_ccds) == \
            (auto.num_workers, auto.num_ccds)


def dropped_default_pool():
    """The wrapper of a default pool that set_default_pool replaced: the
    runtime lives on in it."""
    faiss.ccd.set_default_pool(faiss.ccd.Pool("1x1"))
    pool = faiss.ccd.get_default_pool()
    faiss.ccd.set_default_pool(None)
    gc.collect()
    return pool


def dropped_pool_topology():
    assert "CCD" in dropped_default_pool().topology()


def dropped_pool_stats():
    stats = dropped_default_pool().stats()
    assert stats["num_workers"] == 1


def dropped_pool_wait_idle():
    pool = dropped_default_pool()
    assert_same_answers(env().ivf_ref, env().ivf.search(
        env().xq, K, params=faiss.SearchParametersIVFCCD(
            nprobe=4, runtime=pool.runtime)))
    pool.wait_idle()


def default_pool_dropped_by_caller():
    """set_default_pool(Pool(...)) without keeping the pool: the CCD mode
    searches on it, and get_default_pool returns it."""
    faiss.ccd.set_default_pool(faiss.ccd.Pool("1x1"))
    gc.collect()
    assert faiss.ccd.get_default_pool().num_workers == 1
    ivf_same_as_stock(lambda ivf: ivf.search(env().xq, K))


def refused_mode_keeps_default():
    before = faiss.ccd.get_default_parallel_mode()
    with pytest.raises(ValueError):
        faiss.ccd.set_default_parallel_mode(99)
    assert faiss.ccd.get_default_parallel_mode() == before


def tables_of_dropped_pool():
    tables = faiss.ccd.HNSWTables(faiss.ccd.Pool("1x1"))
    gc.collect()
    tables.add_table(1, env().hnsw)
    hnsw_same_as_stock(env().xq, tables=tables)
    tables.close()


def search_removed_table():
    tables = fresh_tables(table_id=5)
    tables.remove_table(5)
    tables.search(5, env().xq, K)


def search_after_close():
    tables = fresh_tables()
    tables.close()
    assert_same_answers(env().hnsw_ref, tables.search(1, env().xq, K))


def submit_after_close():
    tables = fresh_tables()
    tables.close()
    tables.submit(1, env().xq[0], K)


def submit_then_drop_tables():
    """A query in flight outlives its HNSWTables object."""
    tables = fresh_tables()
    future = tables.submit(1, env().xq, K)
    del tables
    gc.collect()
    assert_same_answers(env().hnsw_ref, future.result(timeout=60))


def close_twice_with_query_in_flight():
    tables = fresh_tables()
    future = tables.submit(1, env().xq, K)
    tables.close()
    tables.close()
    assert_same_answers(env().hnsw_ref, future.result(timeout=60))


def table_ids_after_close_and_remove():
    tables = fresh_tables()
    tables.add_table(2, env().hnsw)
    tables.close()
    tables.remove_table(2)
    assert tables.table_ids() == [1] and 2 not in tables and len(tables) == 1


def wrapper_of_dropped_index_and_pool():
    """IndexIVFCCD keeps the index it wraps and the runtime referenced."""
    wrapper = faiss.IndexIVFCCD(fresh_ivf(), faiss.ccd.Pool("1x1").runtime, 7)
    gc.collect()
    assert_same_answers(env().ivf_ref, wrapper.search(env().xq, K))


def params_of_dropped_pool():
    params = faiss.SearchParametersIVFCCD(
        nprobe=4, runtime=faiss.ccd.Pool("1x1").runtime)
    gc.collect()
    assert_same_answers(env().ivf_ref, env().ivf.search(
        env().xq, K, params=params))


def wrapper_knob(name, value):
    wrapper = faiss.IndexIVFCCD(env().ivf, env().pool.runtime, 3)
    setattr(wrapper, name, value)
    return wrapper.search(env().xq, K)


HUGE_HELPERS_PARAMS = """
    pool = faiss.ccd.Pool("2x1", monitor=False)
    ref = ivf.search(xq, 5)
    params = faiss.SearchParametersIVFCCD(nprobe=4, helpers=2**30,
                                          runtime=pool.runtime)
    D, I = ivf.search(xq, 5, params=params)
    assert (I == ref[1]).all() and np.allclose(D, ref[0])
"""

HUGE_HELPERS_WRAPPER = """
    pool = faiss.ccd.Pool("2x1", monitor=False)
    ref = ivf.search(xq, 5)
    wrapper = faiss.IndexIVFCCD(ivf, pool.runtime, 3)
    wrapper.helpers = 2**30
    D, I = wrapper.search(xq, 5)
    assert (I == ref[1]).all() and np.allclose(D, ref[0])
"""


def synthetic(**kw):
    args = dict(nb=100, d=4, nq=10, nblobs=4)
    args.update(kw)
    return datasets.SkewedSynthetic(**args)


def ignore(x):
    return None


GT = np.arange(15).reshape(3, 5)
