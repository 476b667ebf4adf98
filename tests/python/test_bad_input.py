"""Bad input against every Python entry point (issue 15, "Bad input"): one
table of cases, each (entry point, the bad call, the exception it must
raise, a regex its message must match: a clear message that names the
argument). None as the exception means the call must be answered, and the
callable itself checks the answer, mostly that the CCD path gives what
stock FAISS gives on the same input (NaN and infinite queries, dtypes
FAISS converts, k or nprobe beyond the data). IndexIVFCCD.search raises
the class stock IndexIVF.search raises for the same input, with a message
that names the argument.

After every case the pool must still serve: test_bad_input ends with a
search in the CCD mode, through the module's pool, through IndexIVFCCD and
through HNSWTables, each equal to stock FAISS's answers.

A few calls would take the process or the machine down if they went wrong
(thousands of threads, terabytes, a search that does not end); those run in
a child interpreter with a bounded address space (or, under ASan, RSS) and
a timeout, and the child's exception is raised again here, so the table
checks it like the others.

test_the_table_covers_every_entry_point fails when faiss.ccd gains a
public function, class, method or property without a case here.
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

# ------------------------------------------------------------- the table

E = env  # short, for the table

CASES = [
    # --------------------------------------------------- faiss.ccd.Pool
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool(None), TypeError, "topology"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool(b"2x1"), TypeError,
     "topology"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool(2), TypeError, "topology"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("0x2"), ValueError,
     r'topology spec "0x2".*CCD count'),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x0"), ValueError,
     r'"2x0".*worker count'),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("-1x2"), ValueError,
     "CCD count"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x"), ValueError,
     r'topology spec "2x".*NxM'),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("a;b"), ValueError,
     r'topology spec "a;b".*"a"'),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool(";"), ValueError,
     "empty CPU group"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("3-0"), ValueError,
     "reversed range"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("0-99999"), ValueError,
     "CPU number"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("4097x1"), ValueError,
     r"CCD count.*4096"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("99999999999999999999x1"),
     ValueError, "CCD count"),
    # 16.7 million workers: refused before anything is allocated.
    ("faiss.ccd.Pool",
     lambda: in_child('faiss.ccd.Pool("4096x4096", monitor=False)',
                      memory_gib=3, threads=512),
     ValueError, r"4096x4096.*(worker|CCD)"),
    ("faiss.ccd.Pool", pool_empty_spec_is_auto, None, None),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x1", "bogus"), ValueError,
     r"policy.*'bogus'"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x1", ""), ValueError,
     "policy"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x1", "CCD"), ValueError,
     "policy"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x1", None), TypeError,
     "policy"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x1", monitor=1), TypeError,
     "monitor"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x1", monitor_period=-1.0),
     ValueError, "monitor period"),
    ("faiss.ccd.Pool",
     lambda: faiss.ccd.Pool("2x1", monitor_period=float("nan")),
     ValueError, "monitor period"),
    ("faiss.ccd.Pool",
     lambda: faiss.ccd.Pool("2x1", monitor_period=float("inf")),
     ValueError, "monitor period"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x1", monitor_period=True),
     TypeError, "monitor_period"),
    ("faiss.ccd.Pool", lambda: faiss.ccd.Pool("2x1", fifo_callers=None),
     TypeError, "fifo_callers"),
    ("faiss.ccd.Pool.policy", lambda: set_attr(E().pool, "policy", "rr"),
     AttributeError, "policy"),
    ("faiss.ccd.Pool.num_workers",
     lambda: set_attr(E().pool, "num_workers", 4), AttributeError,
     "num_workers"),
    ("faiss.ccd.Pool.num_ccds", lambda: set_attr(E().pool, "num_ccds", 4),
     AttributeError, "num_ccds"),
    ("faiss.ccd.Pool.topology", dropped_pool_topology, None, None),
    ("faiss.ccd.Pool.stats", dropped_pool_stats, None, None),
    ("faiss.ccd.Pool.stats", lambda: E().pool.stats(True), TypeError,
     "stats"),
    ("faiss.ccd.Pool.wait_idle", dropped_pool_wait_idle, None, None),

    # --------------------------------------------- defaults of faiss.ccd
    ("faiss.ccd.set_default_pool", lambda: faiss.ccd.set_default_pool("2x1"),
     TypeError, "pool"),
    ("faiss.ccd.set_default_pool",
     lambda: faiss.ccd.set_default_pool(E().pool.runtime), TypeError,
     "pool"),
    ("faiss.ccd.set_default_pool", default_pool_dropped_by_caller, None,
     None),
    ("faiss.ccd.get_default_pool", lambda: faiss.ccd.get_default_pool(None),
     TypeError, "get_default_pool"),
    ("faiss.ccd.get_default_parallel_mode", refused_mode_keeps_default,
     None, None),
    ("faiss.ccd.set_default_parallel_mode",
     lambda: faiss.ccd.set_default_parallel_mode(None), TypeError, "mode"),
    ("faiss.ccd.set_default_parallel_mode",
     lambda: faiss.ccd.set_default_parallel_mode(-1), ValueError, "mode"),
    ("faiss.ccd.set_default_parallel_mode",
     lambda: faiss.ccd.set_default_parallel_mode(True), TypeError,
     "mode.*bool"),
    ("faiss.ccd.set_default_parallel_mode",
     lambda: faiss.ccd.set_default_parallel_mode(1.0), TypeError, "mode"),
    ("faiss.ccd.set_default_parallel_mode",
     lambda: faiss.ccd.set_default_parallel_mode("ccd"), TypeError, "mode"),
    ("faiss.ccd.set_default_parallel_mode",
     lambda: faiss.ccd.set_default_parallel_mode(99), ValueError,
     "parallel_mode 99 not supported"),
    ("faiss.ccd.set_default_parallel_mode",
     lambda: faiss.ccd.set_default_parallel_mode(PARALLEL_MODE_CCD | 1),
     ValueError, "parallel_mode 65537 not supported"),
    ("faiss.ccd.set_default_parallel_mode",
     lambda: faiss.ccd.set_default_parallel_mode(2**31), ValueError,
     r"\bmode\b.*2147483648"),

    # ------------------------------------------------ faiss.ccd.HNSWTables
    ("faiss.ccd.HNSWTables", lambda: faiss.ccd.HNSWTables(None), TypeError,
     "pool"),
    ("faiss.ccd.HNSWTables", lambda: faiss.ccd.HNSWTables(E().pool.runtime),
     TypeError, "pool.*CcdRuntime"),
    ("faiss.ccd.HNSWTables", tables_of_dropped_pool, None, None),
    ("faiss.ccd.HNSWTables.pool",
     lambda: set_attr(E().tables, "pool", E().pool), AttributeError, "pool"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(-1, E().hnsw), ValueError, "table_id"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(2**32, E().hnsw), ValueError, "table_id"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(UINT32_MAX, E().hnsw), ValueError,
     "table_id"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(True, E().hnsw), TypeError,
     "table_id.*bool"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(None, E().hnsw), TypeError, "table_id"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(2, None), TypeError, "index"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(2, E().ivf), TypeError,
     "index.*IndexHNSW"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(1, E().hnsw), ValueError,
     "table id 1 is already taken"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(2, E().hnsw, ef_search=0), ValueError,
     "ef_search"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(2, E().hnsw, ef_search=True), TypeError,
     "ef_search"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(2, E().hnsw, ef_search=2**31),
     ValueError, "ef_search"),
    ("faiss.ccd.HNSWTables.add_table",
     lambda: E().tables.add_table(2, faiss.IndexHNSW2Level(
         faiss.IndexFlatL2(D), 4, 8, 4)),
     RuntimeError, "IndexHNSW2Level is not supported"),
    ("faiss.ccd.HNSWTables.remove_table",
     lambda: E().tables.remove_table(99), KeyError, "unknown table id 99"),
    ("faiss.ccd.HNSWTables.remove_table",
     lambda: E().tables.remove_table(-1), ValueError, "table_id"),
    ("faiss.ccd.HNSWTables.remove_table",
     lambda: E().tables.remove_table(None), TypeError, "table_id"),
    ("faiss.ccd.HNSWTables.remove_table", search_removed_table, KeyError,
     "unknown table id 5"),
    ("faiss.ccd.HNSWTables.search", lambda: E().tables.search(99, E().xq, K),
     KeyError, "unknown table id 99"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(None, E().xq, K), TypeError, "table_id"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(2**33, E().xq, K), ValueError, "table_id"),
    ("faiss.ccd.HNSWTables.search", lambda: E().tables.search(1, None, K),
     TypeError, r"\bx\b"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, E().xq.astype(np.float64), K), TypeError,
     "x.*float32.*float64"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, E().xq.astype(np.int64), K), TypeError,
     "x.*float32.*int64"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, E().xq.tolist(), K), TypeError,
     "x must be a numpy"),
    ("faiss.ccd.HNSWTables.search", lambda: E().tables.search(1, E().xq[0], K),
     ValueError, r"x must be 2-D"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, E().xq.reshape(8, D, 1), K), ValueError,
     r"x must be 2-D"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, np.ascontiguousarray(E().xq[:, :8]), K),
     ValueError, "x has 8 columns.*d=16"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, E().xq[::2], K), ValueError,
     "x must be C-contiguous"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, np.asfortranarray(E().xq), K), ValueError,
     "x must be C-contiguous"),
    ("faiss.ccd.HNSWTables.search", lambda: E().tables.search(1, E().xq, None),
     TypeError, r"\bk\b"),
    ("faiss.ccd.HNSWTables.search", lambda: E().tables.search(1, E().xq, 0),
     ValueError, r"\bk\b"),
    ("faiss.ccd.HNSWTables.search", lambda: E().tables.search(1, E().xq, -1),
     ValueError, r"\bk\b"),
    ("faiss.ccd.HNSWTables.search", lambda: E().tables.search(1, E().xq, True),
     TypeError, r"\bk\b.*bool"),
    # 2**40 neighbours of 8 queries: 40 TiB of results.
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, E().xq, 2**40), (ValueError, MemoryError),
     r"\bk\b"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, E().xq, K,
                               params=faiss.SearchParametersIVF()),
     TypeError, "params.*SearchParametersHNSW"),
    ("faiss.ccd.HNSWTables.search",
     lambda: E().tables.search(1, E().xq, K,
                               params=faiss.SearchParametersHNSW(efSearch=0)),
     RuntimeError, "efSearch must be > 0"),
    ("faiss.ccd.HNSWTables.search", lambda: hnsw_same_as_stock(E().special),
     None, None),
    ("faiss.ccd.HNSWTables.search",
     lambda: hnsw_same_as_stock(E().xq, k=3000), None, None),
    ("faiss.ccd.HNSWTables.search", search_after_close, None, None),
    ("faiss.ccd.HNSWTables.submit", lambda: E().tables.submit(99, E().xq[0], K),
     KeyError, "unknown table id 99"),
    ("faiss.ccd.HNSWTables.submit", lambda: E().tables.submit(-1, E().xq[0], K),
     ValueError, "table_id"),
    ("faiss.ccd.HNSWTables.submit", lambda: E().tables.submit(1, None, K),
     TypeError, r"\bx\b"),
    ("faiss.ccd.HNSWTables.submit",
     lambda: E().tables.submit(1, E().xq[0].astype(np.float64), K),
     TypeError, "x.*float32"),
    ("faiss.ccd.HNSWTables.submit",
     lambda: E().tables.submit(1, E().xq[0][:8], K), ValueError,
     "x has 8 columns"),
    ("faiss.ccd.HNSWTables.submit",
     lambda: E().tables.submit(1, np.zeros((0, D), np.float32), K),
     ValueError, "no query"),
    ("faiss.ccd.HNSWTables.submit",
     lambda: E().tables.submit(1, E().xq[::2], K), ValueError,
     "C-contiguous"),
    ("faiss.ccd.HNSWTables.submit", lambda: E().tables.submit(1, E().xq[0], 0),
     ValueError, r"\bk\b"),
    ("faiss.ccd.HNSWTables.submit",
     lambda: E().tables.submit(1, E().xq[0], True), TypeError, r"\bk\b"),
    ("faiss.ccd.HNSWTables.submit",
     lambda: E().tables.submit(1, E().xq[0], 2**40),
     (ValueError, MemoryError), r"\bk\b"),
    ("faiss.ccd.HNSWTables.submit",
     lambda: E().tables.submit(1, E().xq[0], K,
                               params=faiss.SearchParametersIVF()),
     TypeError, "params"),
    ("faiss.ccd.HNSWTables.submit",
     lambda: E().tables.submit(1, E().xq[0], K, params=faiss.
                               SearchParametersHNSW(efSearch=0)).result(60),
     RuntimeError, "efSearch must be > 0"),
    ("faiss.ccd.HNSWTables.submit", submit_after_close, RuntimeError,
     "closed"),
    ("faiss.ccd.HNSWTables.submit", submit_then_drop_tables, None, None),
    ("faiss.ccd.HNSWTables.hand_off",
     lambda: set_attr(E().tables, "hand_off", 2), ValueError, "hand_off"),
    ("faiss.ccd.HNSWTables.hand_off",
     lambda: set_attr(E().tables, "hand_off", -2), ValueError, "hand_off"),
    ("faiss.ccd.HNSWTables.hand_off",
     lambda: set_attr(E().tables, "hand_off", None), TypeError, "hand_off"),
    ("faiss.ccd.HNSWTables.hand_off",
     lambda: set_attr(E().tables, "hand_off", True), TypeError,
     "hand_off.*bool"),
    ("faiss.ccd.HNSWTables.close", close_twice_with_query_in_flight, None,
     None),
    ("faiss.ccd.HNSWTables.table_ids", table_ids_after_close_and_remove,
     None, None),

    # ------------------------------ IndexIVF.parallel_mode (the CCD mode)
    ("IndexIVF.parallel_mode", lambda: search_in_mode(99), RuntimeError,
     "parallel_mode 99 not supported"),
    ("IndexIVF.parallel_mode", lambda: search_in_mode(-1), RuntimeError,
     "parallel_mode -1 not supported"),
    ("IndexIVF.parallel_mode",
     lambda: search_in_mode(PARALLEL_MODE_CCD | 3), RuntimeError,
     "parallel_mode 65539 not supported"),
    ("IndexIVF.parallel_mode",
     lambda: search_in_mode(99, lambda ivf: ivf.range_search(E().xq, 1.0)),
     RuntimeError, "parallel_mode 99 not supported"),
    ("IndexIVF.parallel_mode",
     lambda: set_attr(fresh_ivf(False), "parallel_mode", 2**31),
     OverflowError, "parallel_mode"),
    ("IndexIVF.parallel_mode",
     lambda: set_attr(fresh_ivf(False), "parallel_mode", None), TypeError,
     "parallel_mode"),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(E().special, K)),
     None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.range_search(E().special,
                                                            1.0)),
     None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.range_search(
         E().xq, float("nan"))), None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.range_search(
         E().xq, float("inf"))), None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(
         E().xq.astype(np.float64), K)), None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(
         (E().xq * 8).astype(np.int64), K)), None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(E().xq[::2], K)),
     None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(E().xq[:, :8], K)),
     None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(E().xq, 0)),
     None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(E().xq, 3000)),
     None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(
         E().xq, K, params=faiss.SearchParametersIVF(nprobe=10**6))),
     None, None),
    ("IndexIVF.parallel_mode",
     lambda: ivf_same_as_stock(lambda ivf: ivf.search(
         E().xq, K, params=faiss.SearchParametersHNSW())), None, None),

    # ------------------------------------------ faiss.SearchParametersIVFCCD
    ("faiss.SearchParametersIVFCCD",
     lambda: faiss.SearchParametersIVFCCD(runtime=E().pool), TypeError,
     r"runtime.*Runtime"),
    ("faiss.SearchParametersIVFCCD",
     lambda: faiss.SearchParametersIVFCCD(runtime="2x1"), TypeError,
     "runtime"),
    ("faiss.SearchParametersIVFCCD",
     lambda: faiss.SearchParametersIVFCCD(nprobe=-1), OverflowError,
     "nprobe"),
    ("faiss.SearchParametersIVFCCD",
     lambda: faiss.SearchParametersIVFCCD(nprobe=None), TypeError,
     "nprobe"),
    ("faiss.SearchParametersIVFCCD",
     lambda: faiss.SearchParametersIVFCCD(min_chunk=-1), OverflowError,
     "min_chunk"),
    ("faiss.SearchParametersIVFCCD",
     lambda: faiss.SearchParametersIVFCCD(helpers=2**40), OverflowError,
     "helpers"),
    ("faiss.SearchParametersIVFCCD",
     lambda: faiss.SearchParametersIVFCCD(nrpobe=16), TypeError, "nrpobe"),
    ("faiss.SearchParametersIVFCCD",
     lambda: E().ivf.search(E().xq, K, params=ccd_params(nprobe=0)),
     RuntimeError, "nprobe > 0"),
    ("faiss.SearchParametersIVFCCD",
     lambda: same_as_stock(
         lambda: E().ivf.search(E().xq, K, params=faiss.SearchParametersIVF(
             nprobe=2**40)),
         lambda: E().ivf.search(E().xq, K, params=ccd_params(nprobe=2**40))),
     None, None),
    ("faiss.SearchParametersIVFCCD",
     lambda: E().ivf.search(E().xq, K, params=ccd_params(split_factor=-1)),
     RuntimeError, "split_factor"),
    ("faiss.SearchParametersIVFCCD",
     lambda: E().ivf.search(E().xq, K, params=ccd_params(
         split_factor=float("nan"))), RuntimeError, r"split_factor \(nan\)"),
    ("faiss.SearchParametersIVFCCD",
     lambda: E().ivf.search(E().xq, K, params=ccd_params(
         split_factor=0.1, chunk_factor=-1)), RuntimeError, "chunk_factor"),
    ("faiss.SearchParametersIVFCCD",
     lambda: E().ivf.search(E().xq, K, params=ccd_params(helpers=-5)),
     RuntimeError, "helpers.*-5"),
    # More helpers than the pool has workers: as many as there are.
    ("faiss.SearchParametersIVFCCD", lambda: in_child(HUGE_HELPERS_PARAMS),
     None, None),
    ("faiss.SearchParametersIVFCCD",
     lambda: E().ivf.search(E().xq, K, params=ccd_params(
         list_major_min_batch=-5)), RuntimeError, "list_major_min_batch"),
    ("faiss.SearchParametersIVFCCD",
     lambda: E().ivf.search(E().xq, K, params=ccd_params(table_id=2**40)),
     (ValueError, RuntimeError), "table_id"),
    ("faiss.SearchParametersIVFCCD",
     lambda: E().ivf.search(E().xq, K, params=ccd_params(
         table_id=UINT32_MAX)), (ValueError, RuntimeError),
     "table.?id.*reserved"),
    ("faiss.SearchParametersIVFCCD",
     lambda: same_as_stock(
         lambda: E().ivf.search(E().special, K),
         lambda: E().ivf.search(E().special, K, params=ccd_params())),
     None, None),
    ("faiss.SearchParametersIVFCCD",
     lambda: same_as_stock(
         lambda: E().ivf.range_search(E().special, 1.0),
         lambda: E().ivf.range_search(E().special, 1.0,
                                      params=ccd_params(helpers=1))),
     None, None),
    ("faiss.SearchParametersIVFCCD", params_of_dropped_pool, None, None),

    # --------------------------------------------------- faiss.IndexIVFCCD
    ("faiss.IndexIVFCCD",
     lambda: faiss.IndexIVFCCD(None, E().pool.runtime, 1),
     (TypeError, RuntimeError), "index is null"),
    ("faiss.IndexIVFCCD", lambda: faiss.IndexIVFCCD(E().ivf, None, 1),
     (TypeError, RuntimeError), "runtime is null"),
    ("faiss.IndexIVFCCD", lambda: faiss.IndexIVFCCD(E().ivf, E().pool, 1),
     TypeError, r"runtime.*(pool\.runtime|CcdRuntime)"),
    ("faiss.IndexIVFCCD",
     lambda: faiss.IndexIVFCCD(faiss.IndexFlatL2(D), E().pool.runtime, 1),
     TypeError, r"index.*IndexIVF"),
    ("faiss.IndexIVFCCD",
     lambda: faiss.IndexIVFCCD(E().ivf, E().pool.runtime, -1), ValueError,
     "table_id"),
    ("faiss.IndexIVFCCD",
     lambda: faiss.IndexIVFCCD(E().ivf, E().pool.runtime, 2**32),
     ValueError, "table_id"),
    ("faiss.IndexIVFCCD",
     lambda: faiss.IndexIVFCCD(E().ivf, E().pool.runtime, UINT32_MAX),
     (ValueError, RuntimeError), "table id 0xffffffff is reserved"),
    ("faiss.IndexIVFCCD",
     lambda: faiss.IndexIVFCCD(E().ivf, E().pool.runtime, True), TypeError,
     "table_id"),
    ("faiss.IndexIVFCCD",
     lambda: faiss.IndexIVFCCD(fresh_ivf(False), E().pool.runtime, 1)
     .search(E().xq, K), RuntimeError, "not trained"),
    ("faiss.IndexIVFCCD", wrapper_of_dropped_index_and_pool, None, None),
    ("faiss.IndexIVFCCD.search", lambda: E().wrapper.search(E().xq[:, :8], K),
     AssertionError, r"(\bd\b|columns).*16"),
    ("faiss.IndexIVFCCD.search", lambda: E().wrapper.search(E().xq[0], K),
     ValueError, r"\bx\b.*2-D"),
    ("faiss.IndexIVFCCD.search", lambda: E().wrapper.search(None, K),
     AttributeError, r"\bx\b"),
    ("faiss.IndexIVFCCD.search", lambda: E().wrapper.search(E().xq, 0),
     AssertionError, r"\bk\b"),
    ("faiss.IndexIVFCCD.search", lambda: E().wrapper.search(E().xq, True),
     TypeError, r"\bk\b"),
    ("faiss.IndexIVFCCD.search",
     lambda: E().wrapper.search(E().xq, K,
                                params=faiss.SearchParametersHNSW()),
     RuntimeError, "params have incorrect type"),
    ("faiss.IndexIVFCCD.search",
     lambda: same_as_stock(lambda: E().ivf.search(E().special, K),
                           lambda: E().wrapper.search(E().special, K)),
     None, None),
    ("faiss.IndexIVFCCD.search",
     lambda: same_as_stock(
         lambda: E().ivf.search(E().xq.astype(np.float64), K),
         lambda: E().wrapper.search(E().xq.astype(np.float64), K)),
     None, None),
    ("faiss.IndexIVFCCD.range_search",
     lambda: same_as_stock(
         lambda: E().ivf.range_search(E().special, float("nan")),
         lambda: E().wrapper.range_search(E().special, float("nan"))),
     None, None),
    ("faiss.IndexIVFCCD.range_search",
     lambda: same_as_stock(
         lambda: E().ivf.range_search(E().xq, -1.0),
         lambda: E().wrapper.range_search(E().xq, -1.0)), None, None),
    ("faiss.IndexIVFCCD.helpers", lambda: wrapper_knob("helpers", -5),
     RuntimeError, "helpers.*-5"),
    ("faiss.IndexIVFCCD.helpers", lambda: in_child(HUGE_HELPERS_WRAPPER),
     None, None),
    ("faiss.IndexIVFCCD.split_factor",
     lambda: wrapper_knob("split_factor", float("nan")), RuntimeError,
     "split_factor"),
    ("faiss.IndexIVFCCD.table_id",
     lambda: set_attr(E().wrapper, "table_id", 5), AttributeError,
     "table_id"),
    ("faiss.IndexIVFCCD.index",
     lambda: set_attr(E().wrapper, "index", None), AttributeError, "index"),

    # ------------------------------------------ faiss.contrib.ccd.datasets
    ("faiss.contrib.ccd.datasets.by_name", lambda: datasets.by_name(None),
     TypeError, "spec"),
    ("faiss.contrib.ccd.datasets.by_name", lambda: datasets.by_name(""),
     ValueError, "unknown data set ''"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:axb"), ValueError, "NBxD"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:100x4x3"), ValueError, "NBxD"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:0x4"), ValueError, r"\bnb\b"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:-5x4"), ValueError, r"\bnb\b"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:100x0"), ValueError, r"\bd\b"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:100000000000000x4"),
     (ValueError, MemoryError), r"\bnb\b"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:3000x4", nq=0), ValueError,
     r"\bnq\b"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:3000x4", nq=-1), ValueError,
     r"\bnq\b"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("synthetic:3000x4", nq=True), ValueError,
     r"\bnq\b"),
    ("faiss.contrib.ccd.datasets.by_name", lambda: datasets.by_name("sift1m:"),
     ValueError, "directory"),
    ("faiss.contrib.ccd.datasets.by_name",
     lambda: datasets.by_name("sift1m:/nonexistent"), FileNotFoundError,
     "/nonexistent/sift_base.fvecs"),
    ("faiss.contrib.ccd.datasets.SkewedSynthetic",
     lambda: synthetic(nb=-1), ValueError, r"\bnb\b"),
    ("faiss.contrib.ccd.datasets.SkewedSynthetic",
     lambda: synthetic(zipf=float("nan")), ValueError, "zipf"),
    ("faiss.contrib.ccd.datasets.SkewedSynthetic",
     lambda: synthetic(spread=float("inf")), ValueError, "spread"),
    ("faiss.contrib.ccd.datasets.SkewedSynthetic",
     lambda: synthetic(zipf=None), (TypeError, ValueError), "zipf"),
    ("faiss.contrib.ccd.datasets.SkewedSynthetic.query_trace",
     lambda: synthetic().query_trace(0), ValueError, r"\bn\b"),
    ("faiss.contrib.ccd.datasets.SkewedSynthetic.query_trace",
     lambda: synthetic().query_trace(5, hot_rotate_every=0), ValueError,
     "hot_rotate_every"),
    ("faiss.contrib.ccd.datasets.CachedGroundTruth.get_groundtruth",
     lambda: synthetic().get_groundtruth(0), ValueError, r"\bk\b"),
    ("faiss.contrib.ccd.datasets.CachedGroundTruth.get_groundtruth",
     lambda: synthetic().get_groundtruth(True), ValueError, r"\bk\b"),
    ("faiss.contrib.ccd.datasets.CachedGroundTruth.get_groundtruth",
     lambda: synthetic().get_groundtruth(101), ValueError, "k=101 exceeds"),
    ("faiss.contrib.ccd.datasets.CachedGroundTruth.get_train",
     lambda: synthetic().get_train(-5), ValueError, "maxtrain"),
    ("faiss.contrib.ccd.datasets.exact_knn",
     lambda: datasets.exact_knn(E().xq, E().xb[:, :8], 3), ValueError,
     r"\bd\b|dimension"),
    ("faiss.contrib.ccd.datasets.exact_knn",
     lambda: datasets.exact_knn(E().xq, E().xb, 3, metric="cosine"),
     ValueError, "metric.*cosine"),

    # ---------------------------------------- faiss.contrib.ccd.evaluation
    ("faiss.contrib.ccd.evaluation.recall_at",
     lambda: evaluation.recall_at(GT, GT, 0), ValueError, "rank 0"),
    ("faiss.contrib.ccd.evaluation.recall_at",
     lambda: evaluation.recall_at(GT, GT, 6), ValueError, "rank 6"),
    ("faiss.contrib.ccd.evaluation.recall_at",
     lambda: evaluation.recall_at(GT, GT, None), TypeError, r"\br\b|rank"),
    ("faiss.contrib.ccd.evaluation.recall_at",
     lambda: evaluation.recall_at(GT, GT, True), TypeError, r"\br\b|rank"),
    ("faiss.contrib.ccd.evaluation.recall_at",
     lambda: evaluation.recall_at(GT[0], GT, 1), ValueError, "2-d"),
    ("faiss.contrib.ccd.evaluation.recall_at",
     lambda: evaluation.recall_at(GT[:2], GT, 1), ValueError,
     "2 result rows for 3 queries"),
    ("faiss.contrib.ccd.evaluation.intersection_recall",
     lambda: evaluation.intersection_recall(GT, GT, k=0), ValueError, "k=0"),
    ("faiss.contrib.ccd.evaluation.summary",
     lambda: evaluation.summary([0.1], float("nan"), 1), ValueError, "wall"),
    ("faiss.contrib.ccd.evaluation.summary",
     lambda: evaluation.summary([0.1], 0, 1), ValueError, "wall"),
    ("faiss.contrib.ccd.evaluation.summary",
     lambda: evaluation.summary([0.1], 1.0, -5), ValueError, "queries"),
    ("faiss.contrib.ccd.evaluation.percentiles",
     lambda: evaluation.percentiles(None), TypeError, "latencies"),
    ("faiss.contrib.ccd.evaluation.latency_ccdf",
     lambda: evaluation.latency_ccdf([0.1, 0.2], points=1), ValueError,
     "points"),
    ("faiss.contrib.ccd.evaluation.latency_ccdf",
     lambda: in_child("from faiss.contrib.ccd import evaluation\n"
                      "evaluation.latency_ccdf([0.1, 0.2], points=10**9)"),
     ValueError, "points"),
    ("faiss.contrib.ccd.evaluation.pool_counters",
     lambda: evaluation.pool_counters(None), TypeError, "pool"),
    ("faiss.contrib.ccd.evaluation.combine_rounds",
     lambda: evaluation.combine_rounds([]), ValueError, "round"),

    # ------------------------------------------- faiss.contrib.ccd.loadgen
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: loadgen.batches(ignore, E().xq, 0, calls=1), ValueError,
     "batch_size"),
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: loadgen.batches(ignore, E().xq, True, calls=1), ValueError,
     "batch_size"),
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: loadgen.batches(ignore, E().xq, 2**40, calls=1),
     (ValueError, MemoryError), "batch_size"),
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: loadgen.batches(ignore, E().xq, 2, calls=1, duration_s=1),
     ValueError, "exactly one of duration_s"),
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: loadgen.batches(ignore, E().xq[0], 2, calls=1), ValueError,
     "queries.*2-d"),
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: loadgen.batches(ignore, E().xq, 2, duration_s=float("nan")),
     ValueError, "duration_s"),
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: in_child("from faiss.contrib.ccd import loadgen\n"
                      "loadgen.batches(len, xq, 2, duration_s=float('inf'))",
                      timeout=20),
     ValueError, "duration_s"),
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: loadgen.batches(ignore, E().xq, 2, calls=-1), ValueError,
     "calls"),
    ("faiss.contrib.ccd.loadgen.batches",
     lambda: loadgen.batches(None, E().xq, 2, calls=1), TypeError,
     "search"),
    ("faiss.contrib.ccd.loadgen.closed_loop",
     lambda: loadgen.closed_loop(ignore, E().xq, 0, calls=1), ValueError,
     "clients"),
    ("faiss.contrib.ccd.loadgen.closed_loop",
     lambda: in_child("from faiss.contrib.ccd import loadgen\n"
                      "loadgen.closed_loop(len, xq, 10**6, calls=1)",
                      threads=256, timeout=45),
     (ValueError, RuntimeError), "clients"),
    ("faiss.contrib.ccd.loadgen.open_loop",
     lambda: loadgen.open_loop(ignore, E().xq, 0, 1), ValueError,
     "rate_qps"),
    ("faiss.contrib.ccd.loadgen.open_loop",
     lambda: loadgen.open_loop(ignore, E().xq, float("inf"), 1), ValueError,
     "rate_qps"),
    ("faiss.contrib.ccd.loadgen.open_loop",
     lambda: loadgen.open_loop(ignore, E().xq, 1e12, 1),
     (ValueError, MemoryError), "rate_qps"),
    ("faiss.contrib.ccd.loadgen.open_loop",
     lambda: loadgen.open_loop(ignore, E().xq, 100, 0.1, senders=0),
     ValueError, "senders"),
    ("faiss.contrib.ccd.loadgen.open_loop",
     lambda: in_child("from faiss.contrib.ccd import loadgen\n"
                      "loadgen.open_loop(len, xq, 100, 0.1, senders=10**6)",
                      threads=256, timeout=45),
     (ValueError, RuntimeError), "senders"),
    ("faiss.contrib.ccd.loadgen.poisson_arrivals",
     lambda: loadgen.poisson_arrivals(-1, 1), ValueError, "rate_qps"),
    ("faiss.contrib.ccd.loadgen.poisson_arrivals",
     lambda: loadgen.poisson_arrivals(1, float("inf")), ValueError,
     "duration_s"),

    # -------------------------------------------- faiss.contrib.ccd.report
    ("faiss.contrib.ccd.report.validate", lambda: report.validate(None),
     ValueError, "dict"),
    ("faiss.contrib.ccd.report.validate", lambda: report.validate({}),
     ValueError, "'benchmark'"),
    ("faiss.contrib.ccd.report.validate",
     lambda: report.validate({"benchmark": "../x", "title": "t"}),
     ValueError, "plain file name"),
    ("faiss.contrib.ccd.report.validate",
     lambda: report.validate({"benchmark": "x", "title": "t", "tables": [
         {"columns": ["a"], "rows": [[1, 2]]}]}), ValueError,
     "2 cells for 1 columns"),
    ("faiss.contrib.ccd.report.validate",
     lambda: report.validate({"benchmark": "x", "title": "t",
                              "tables": [{"rows": []}]}),
     ValueError, "columns"),
    ("faiss.contrib.ccd.report.validate",
     lambda: report.validate({"benchmark": "x", "title": "t",
                              "plots": [{"kind": "pie"}]}),
     ValueError, "kind"),
    ("faiss.contrib.ccd.report.validate",
     lambda: report.validate({"benchmark": "x", "title": "t", "plots": [
         {"title": "p", "series": [{"y": [1, 2]}]}]}), ValueError,
     r"\bx\b"),
    ("faiss.contrib.ccd.report.finish",
     lambda: report.finish(None, "/nonexistent"), ValueError, "dict"),
]

@pytest.mark.parametrize("entry,call,error,match", CASES,
                         ids=[case[0] for case in CASES])
def test_bad_input(entry, call, error, match):
    """The call raises `error` with a message matching `match` (or, with
    error None, is answered and checks its answer itself); then the pool
    still serves as stock FAISS does."""
    if error is None:
        call()
    else:
        with pytest.raises(error) as info:
            call()
        message = str(info.value)
        assert re.search(match, message, re.S), \
            f"{entry}: unclear message {message!r} for {info.typename}"
    gc.collect()
    check_pool_serves()


def ccd_public_entry_points():
    """faiss.ccd's public functions and classes, and the public methods
    and properties of those classes, by introspection."""
    module = faiss.ccd
    names = set()
    for name, obj in vars(module).items():
        if name.startswith("_") or \
                getattr(obj, "__module__", None) != module.__name__:
            continue
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        names.add(f"faiss.ccd.{name}")
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and (
                        inspect.isfunction(member) or
                        isinstance(member, (property, classmethod,
                                            staticmethod))):
                    names.add(f"faiss.ccd.{name}.{attr}")
    return names


def test_the_table_covers_every_entry_point():
    entries = collections.Counter(case[0] for case in CASES)
    assert len(CASES) >= 40
    public = ccd_public_entry_points()
    assert {"faiss.ccd.Pool", "faiss.ccd.HNSWTables.submit",
            "faiss.ccd.set_default_pool"} <= public
    missing = sorted(public - set(entries))
    assert not missing, f"entry points of faiss.ccd without a case: {missing}"
    # The faiss classes the CCD mode adds, and the contrib helpers.
    for name in ("faiss.IndexIVFCCD", "faiss.IndexIVFCCD.search",
                 "faiss.SearchParametersIVFCCD", "IndexIVF.parallel_mode",
                 "faiss.contrib.ccd.datasets.by_name",
                 "faiss.contrib.ccd.evaluation.recall_at",
                 "faiss.contrib.ccd.loadgen.open_loop",
                 "faiss.contrib.ccd.report.validate"):
        assert entries[name] >= 1, name
    # Every case is well formed.
    for entry, call, error, match in CASES:
        assert callable(call), entry
        assert (error is None) == (match is None), entry
        if match is not None:
            re.compile(match)
    print(f"{len(CASES)} bad-input cases over {len(entries)} entry points")


def test_child_reports_its_exception():
    """in_child raises the child's exception here, and says so when the
    child hangs; the table's children rely on it."""
    with pytest.raises(ValueError, match="from the child"):
        in_child("raise ValueError('from the child')")
    assert in_child("assert ivf.ntotal == 2000") is None
    with pytest.raises(AssertionError, match="hang"):
        in_child("import time\ntime.sleep(30)", timeout=5)
