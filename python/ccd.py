"""faiss.ccd: the CCD-aware pool behind faiss.PARALLEL_MODE_CCD.

    import faiss

    index.parallel_mode = faiss.PARALLEL_MODE_CCD  # searches use the pool
    D, I = index.search(xq, 10)

    # The pool they use: made on first use (FAISS_CCD_TOPOLOGY, else
    # hwloc's L3 domains), or set here.
    faiss.ccd.set_default_pool(faiss.ccd.Pool(topology="4x2"))
    # IVF indexes made or loaded from now on start in the CCD mode (the
    # environment variable FAISS_CCD_PARALLEL_MODE=ccd does the same).
    faiss.ccd.set_default_parallel_mode(faiss.PARALLEL_MODE_CCD)

    # Many HNSW tables, one task per query on its table's CCD.
    tables = faiss.ccd.HNSWTables(pool)
    tables.add_table(7, hnsw_index)
    future = tables.submit(7, xq[0], 10)  # a concurrent.futures.Future

The mode is IndexIVF's own C++ field: it holds through the searches of
IndexIDMap, IndexPreTransform, IndexRefineFlat and IndexShards, and through
clone_index and downcast_index. FAISS's file format has no field for it:
read_index, deserialize_index and pickle give the IVF indexes they make
the default mode (set_default_parallel_mode).

Per call, faiss.SearchParametersIVFCCD(nprobe=..., runtime=pool.runtime,
split_factor=...) searches any IVF index through a given pool; the explicit
wrapper faiss.IndexIVFCCD(index, pool.runtime, table_id) does so for all
its searches. See the README's "Using it from Python".
"""

import atexit
import concurrent.futures
import itertools
import json
import numbers
import os
import threading
import weakref

import numpy as np

import faiss

PARALLEL_MODE_CCD = faiss.PARALLEL_MODE_CCD
POLICIES = ("ccd", "flat", "rr")
# MappingId's table half; 0xffffffff is reserved by the pool.
MAX_TABLE_ID = 0xFFFFFFFE


# ------------------------------------------------------------------ checks

def _check_int(name, value, minimum=None, maximum=None):
    """An int (not bool) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def _check_float32_matrix(name, x, d, allow_vector=False):
    """x: a C-contiguous float32 numpy array of shape (n, d), or (d,) when
    allow_vector. Returns it as a 2-D view (no copy)."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray of float32, "
                        f"not {type(x).__name__}")
    if x.dtype != np.float32:
        raise TypeError(f"{name} must have dtype float32, not {x.dtype}")
    if x.ndim == 1 and allow_vector:
        x = x.reshape(1, -1)
    if x.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D of shape (n, {d}), got shape {x.shape}")
    if x.shape[1] != d:
        raise ValueError(
            f"{name} has {x.shape[1]} columns, the index has d={d}")
    if not x.flags.c_contiguous:
        raise ValueError(
            f"{name} must be C-contiguous (use numpy.ascontiguousarray)")
    return x


def _read_physical_memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


# Read once: sysconf(SC_PHYS_PAGES) is a system call, and a search's
# results are sized on every call.
_PHYSICAL_MEMORY = _read_physical_memory()


def _result_arrays(n, k):
    """D (n, k) float32 and I (n, k) int64 for a search's results; a
    MemoryError that names k when they cannot be had: refused before any
    allocation when they exceed the machine's physical memory (an
    allocator may abort rather than fail, as AddressSanitizer's does)."""
    size = 12 * n * k
    limit = _PHYSICAL_MEMORY
    if limit is not None and size > limit:
        raise MemoryError(f"k={k}: {n} x {k} results ({size} bytes) exceed "
                          f"this machine's memory ({limit} bytes)")
    try:
        return (np.empty((n, k), dtype=np.float32),
                np.empty((n, k), dtype=np.int64))
    except (MemoryError, ValueError):
        raise MemoryError(f"k={k}: {n} x {k} results ({size} bytes) do not "
                          "fit in memory") from None


def _check_params(params, cls):
    if params is not None and not isinstance(params, cls):
        raise TypeError(f"params must be a faiss.{cls.__name__}, "
                        f"not {type(params).__name__}")
    return params


# -------------------------------------------------------------------- pool

class Pool:
    """Pool(topology="auto", policy="ccd", monitor=True, monitor_period=0.5,
         fifo_callers=False)

    A CCD-aware work-stealing pool (one pinned worker per core of its
    topology) and, unless monitor=False, the monitor that re-maps the keys
    of every index and table searched through it to CCDs as their traffic
    drifts. Many indexes and threads share one pool: the machine is never
    oversubscribed.

    topology: "auto" (FAISS_CCD_TOPOLOGY, else hwloc's L3 domains), "NxM"
        (N CCDs of M workers, e.g. "4x2") or CPU lists, one group per CCD
        ("0-3;4-7").
    policy: "ccd" (keys stay on their CCD, steal inside a CCD first),
        "flat" (topology-blind stealing) or "rr" (round robin, no stealing).
    fifo_callers: admit at most num_workers + 1 searching threads at once,
        first come, first served; the others wait their turn. With many
        more client threads than cores this cuts the latency tail (every
        search finishes in arrival order instead of all sharing the cores)
        at some throughput (a sleep and a wake-up per waiting search).

    pool.runtime is the C++ object (faiss.CcdRuntime) that
    faiss.IndexIVFCCD and faiss.SearchParametersIVFCCD take. The pool stops
    when the last reference to it, Python's or C++'s, goes, after its
    queued work has run.
    """

    def __init__(self, topology="auto", policy="ccd", monitor=True,
                 monitor_period=0.5, fifo_callers=False):
        if not isinstance(topology, str):
            raise TypeError("topology must be a str such as 'auto' or '4x2'")
        if not isinstance(policy, str):
            raise TypeError("policy must be a str: one of " + str(POLICIES))
        if policy not in POLICIES:
            raise ValueError(
                f"policy must be one of {POLICIES}, got {policy!r}")
        if not isinstance(monitor, bool):
            raise TypeError("monitor must be a bool")
        if isinstance(monitor_period, bool) or \
                not isinstance(monitor_period, numbers.Real):
            raise TypeError("monitor_period must be a number of seconds")
        if not isinstance(fifo_callers, bool):
            raise TypeError("fifo_callers must be a bool")
        try:
            self.runtime = faiss.CcdRuntime.make(
                topology, policy, monitor, float(monitor_period),
                fifo_callers)
        except RuntimeError as e:
            # std::invalid_argument arrives as "C++ exception <message>".
            raise ValueError(str(e).replace("C++ exception ", "")) from None

    @classmethod
    def _of(cls, runtime):
        pool = cls.__new__(cls)
        pool.runtime = runtime
        return pool

    def topology(self):
        """A readable description of the CCDs and their CPUs."""
        return self.runtime.describe()

    @property
    def policy(self):
        return self.runtime.policy_name()

    @property
    def num_workers(self):
        return self.runtime.num_workers()

    @property
    def num_ccds(self):
        return self.runtime.num_ccds()

    def stats(self):
        """A dict: totals, "workers" (one dict per worker), steal ratios,
        "tasks_run_per_ccd", "epoch" (mapping epoch) and "monitor" (per-CCD
        traffic "ccd_traffic" in bytes over the monitor's window, imbalance,
        re-maps; None without a monitor)."""
        return json.loads(self.runtime.stats_json())

    def wait_idle(self):
        """Block until every task submitted so far has run."""
        self.runtime.wait_idle()

    def __repr__(self):
        return (f"faiss.ccd.Pool(policy={self.policy!r}, "
                f"workers={self.num_workers}, ccds={self.num_ccds})")


def get_default_pool():
    """The pool IVF indexes in PARALLEL_MODE_CCD use: the one given to
    set_default_pool(), else a Pool() made on first use."""
    return Pool._of(faiss.CcdRuntime.get_default())


def set_default_pool(pool):
    """Make `pool` the process's default (None: a fresh Pool() on next
    use). Searches already running finish on the pool they started on."""
    if pool is not None and not isinstance(pool, Pool):
        raise TypeError("pool must be a faiss.ccd.Pool or None")
    faiss.CcdRuntime.set_default(None if pool is None else pool.runtime)


def get_default_parallel_mode():
    """The parallel_mode IVF indexes start with."""
    return faiss.ccd_default_parallel_mode()


def set_default_parallel_mode(mode):
    """The parallel_mode of IVF indexes made or loaded from now on
    (index_factory, read_index, deserialize_index, constructors): 0-3 or
    faiss.PARALLEL_MODE_CCD. Indexes that exist keep theirs."""
    mode = _check_int("mode", mode, 0, 2**31 - 1)
    try:
        faiss.ccd_set_default_parallel_mode(mode)
    except RuntimeError as e:
        raise ValueError(str(e)) from None


# ----------------------------------------------------- the faiss classes

# IndexIVFCCD keeps the index it wraps referenced (the runtime it holds
# itself, by shared_ptr); its index, own_fields and table_id are read-only
# (%immutable in faiss_ccd.swig).
faiss.add_ref_in_constructor(faiss.IndexIVFCCD, 0)


def _keep_assigned(the_class, names):
    """Setting one of the pointer fields `names` of the_class (by keyword
    in the constructor or by assignment) keeps the Python object
    referenced by the params until the field is set again: C++ does not
    own them, and the params may outlive the caller's own reference (FAISS
    1.7.3's SearchParameters constructor means to, but misses instances)."""
    for name in names:
        field = getattr(the_class, name)

        def keep(self, value, name=name, field=field):
            field.fset(self, value)
            self.__dict__.setdefault("_ccd_referenced", {})[name] = value

        setattr(the_class, name, property(field.fget, keep, doc=field.__doc__))


_keep_assigned(faiss.SearchParametersIVFCCD,
               ("runtime", "sel", "quantizer_params"))


def _checked_params_init(init):
    """SearchParametersIVFCCD(**fields): a misspelled field is a TypeError
    that names it (FAISS's own constructor asserts without a message)."""
    def checked(self, **fields):
        for name in fields:
            if name.startswith("_") or not hasattr(
                    faiss.SearchParametersIVFCCD, name):
                raise TypeError(
                    f"SearchParametersIVFCCD has no field {name!r}")
        init(self, **fields)
    return checked


faiss.SearchParametersIVFCCD.__init__ = _checked_params_init(
    faiss.SearchParametersIVFCCD.__init__)


def _checked_ivfccd_init(init):
    """IndexIVFCCD(index, runtime, table_id=0, own_fields=False) with its
    arguments checked first, each error naming the argument (SWIG's own
    says only that no overload matched)."""
    def checked(self, index, runtime, table_id=0, *rest):
        if index is not None and not isinstance(index, faiss.IndexIVF):
            raise TypeError(
                "index must be a faiss.IndexIVF (faiss.extract_index_ivf "
                f"finds the one inside), not {type(index).__name__}")
        if isinstance(runtime, Pool):
            raise TypeError("runtime must be a faiss.CcdRuntime: give "
                            "pool.runtime, not the faiss.ccd.Pool")
        if runtime is not None and not isinstance(runtime, faiss.CcdRuntime):
            raise TypeError("runtime must be a faiss.CcdRuntime "
                            f"(pool.runtime), not {type(runtime).__name__}")
        table_id = _check_int("table_id", table_id, 0, 0xFFFFFFFF)
        init(self, index, runtime, table_id, *rest)
    return checked


def _checked_ivfccd_search(search):
    """IndexIVFCCD.search with x and k checked first. Each bad argument
    raises the exception class stock IndexIVF.search raises for it (code
    that catches stock's keeps working), with a message naming the
    argument where FAISS's generic wrapper gives none."""
    def checked(self, x, k, **kw):
        _check_query_matrix(x, self.d)
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"k must be an int, not {type(k).__name__}")
        if k < 1:
            raise AssertionError(f"k must be >= 1, got {k}")
        return search(self, x, k, **kw)
    return checked


def _checked_ivfccd_range_search(range_search):
    def checked(self, x, thresh, **kw):
        _check_query_matrix(x, self.d)
        return range_search(self, x, thresh, **kw)
    return checked


def _check_query_matrix(x, d):
    """x: an array of shape (n, d), of any dtype FAISS converts; errors of
    the classes FAISS's wrapper raises (AttributeError without a .shape,
    ValueError for another number of dimensions, AssertionError for
    another d)."""
    shape = getattr(x, "shape", None)
    if not isinstance(shape, tuple):
        raise AttributeError(f"x must be a numpy array of shape (n, {d}), "
                             f"not {type(x).__name__}")
    if len(shape) != 2:
        raise ValueError(f"x must be 2-D of shape (n, {d}), got shape "
                         f"{shape}")
    if shape[1] != d:
        raise AssertionError(f"x has {shape[1]} columns, the index has "
                             f"d={d}")


faiss.IndexIVFCCD.__init__ = _checked_ivfccd_init(faiss.IndexIVFCCD.__init__)
faiss.IndexIVFCCD.search = _checked_ivfccd_search(faiss.IndexIVFCCD.search)
faiss.IndexIVFCCD.range_search = _checked_ivfccd_range_search(
    faiss.IndexIVFCCD.range_search)


# -------------------------------------------------------------------- HNSW

class HNSWTables:
    """HNSWTables(pool)

    add_table(table_id, index, ef_search=None) adds a faiss.IndexHNSW*
    object as it is (no copy) and keeps it referenced until
    remove_table(table_id) has returned, which it does once no query uses
    the table any more; a submitted query keeps its index referenced until
    its future is done. search() blocks; submit() returns a
    concurrent.futures.Future. Every method may be called from many Python
    threads at once (the GIL is released while C++ runs). As in FAISS, do
    not modify an added index.

    efSearch: a query uses the efSearch of its params
    (faiss.SearchParametersHNSW), else the table's (ef_search given to
    add_table), else the index's hnsw.efSearch when it was added; later
    changes to index.hnsw.efSearch do not reach the table. FAISS 1.7.3 sizes
    the search from the index's own hnsw.efSearch, so an efSearch above it
    widens the search little or not at all (stock IndexHNSW.search alike).
    """

    def __init__(self, pool):
        if not isinstance(pool, Pool):
            raise TypeError(
                f"pool must be a faiss.ccd.Pool, not {type(pool).__name__}")
        self._pool = pool
        self._tables = faiss.HNSWTables(pool.runtime)
        self._lock = threading.Lock()
        self._indexes = {}  # table id -> index, guarded by _lock
        self._dispatcher = None  # guarded by _lock
        self._closed = False  # guarded by _lock
        _all_tables.add(self)

    @property
    def pool(self):
        return self._pool

    @property
    def hand_off(self):
        """Where search() runs its queries: -1 (default) decides by cost
        (in the calling thread unless it runs on another CCD than the
        table's), 1 always as pool tasks on the table's CCD, 0 always in
        the calling thread (see HNSWTables::hand_off in C++)."""
        return self._tables.hand_off

    @hand_off.setter
    def hand_off(self, value):
        self._tables.hand_off = _check_int("hand_off", value, -1, 1)

    def add_table(self, table_id, index, ef_search=None):
        table_id = _check_int("table_id", table_id, 0, MAX_TABLE_ID)
        if not isinstance(index, faiss.IndexHNSW):
            raise TypeError("index must be a faiss.IndexHNSW, "
                            f"not {type(index).__name__}")
        ef = (-1 if ef_search is None
              else _check_int("ef_search", ef_search, 1, 2**31 - 1))
        with self._lock:
            if table_id in self._indexes:
                raise ValueError(f"table id {table_id} is already taken")
            self._tables.add_table(table_id, index, False, ef)
            self._indexes[table_id] = index

    def remove_table(self, table_id):
        """Remove a table; returns once queries in flight on it are done.
        Other calls do not wait meanwhile; the id may be added again as
        soon as this returns."""
        table_id = _check_int("table_id", table_id, 0, MAX_TABLE_ID)
        with self._lock:
            index = self._indexes.pop(table_id, None)
        if index is None:
            raise KeyError(f"unknown table id {table_id}")
        # Removes at once, then waits (without the GIL) for queries in
        # flight; only then may `index` be dropped.
        self._tables.remove_table_and_wait(table_id)
        del index

    def table_ids(self):
        with self._lock:
            return sorted(self._indexes)

    def __len__(self):
        with self._lock:
            return len(self._indexes)

    def __contains__(self, table_id):
        with self._lock:
            return table_id in self._indexes

    def _index(self, table_id):
        table_id = _check_int("table_id", table_id, 0, MAX_TABLE_ID)
        with self._lock:
            index = self._indexes.get(table_id)
        if index is None:
            raise KeyError(f"unknown table id {table_id}")
        return table_id, index

    def search(self, table_id, x, k, *, params=None):
        """x: float32 (n, d). Returns D (n, k), I (n, k)."""
        table_id, index = self._index(table_id)
        x = _check_float32_matrix("x", x, index.d)
        k = _check_int("k", k, 1)
        params = _check_params(params, faiss.SearchParametersHNSW)
        n = x.shape[0]
        D, I = _result_arrays(n, k)
        self._tables.search(
            table_id, n, faiss.swig_ptr(x), index.d, k, faiss.swig_ptr(D),
            faiss.swig_ptr(I), params)
        return D, I

    def submit(self, table_id, x, k, *, params=None):
        """Like search(), returning at once a concurrent.futures.Future of
        (D, I). x: (d,) for one query (then D and I have shape (k,)) or
        (n, d). Input errors raise here; errors while searching arrive
        through the future."""
        table_id, index = self._index(table_id)
        one = isinstance(x, np.ndarray) and x.ndim == 1
        x = _check_float32_matrix("x", x, index.d, allow_vector=True)
        k = _check_int("k", k, 1)
        params = _check_params(params, faiss.SearchParametersHNSW)
        n = x.shape[0]
        if n == 0:
            raise ValueError("submit: x holds no query")
        D, I = _result_arrays(n, k)
        future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        result = (D[0], I[0]) if one else (D, I)
        dispatcher = self._get_dispatcher()
        # Everything the query reads or writes stays referenced until its
        # completion is popped, the index included.
        ticket = dispatcher.expect(future, result, (x, D, I, params, index))
        try:
            self._tables.submit(
                table_id, n, faiss.swig_ptr(x), index.d, k,
                faiss.swig_ptr(D), faiss.swig_ptr(I), params, ticket,
                dispatcher.completions)
        except BaseException:
            dispatcher.forget(ticket)
            raise
        return future

    def _get_dispatcher(self):
        with self._lock:
            if self._closed:
                raise RuntimeError("submit: the tables have been closed")
            if self._dispatcher is None:
                self._dispatcher = _Dispatcher()
            return self._dispatcher

    def close(self):
        """Stop accepting submit(); futures already returned complete.
        search() keeps working."""
        with self._lock:
            self._closed = True
            if self._dispatcher is not None:
                self._dispatcher.close()

    def __del__(self):
        dispatcher = getattr(self, "_dispatcher", None)
        if dispatcher is not None:
            dispatcher.close()

    def __repr__(self):
        return f"faiss.ccd.HNSWTables({len(self)} tables)"


_dispatchers = weakref.WeakSet()
_all_tables = weakref.WeakSet()
# The parent's dispatchers, kept unused in a fork() child: their thread is
# not there, and their completion queue's mutex may be held by it.
_forked_away = []


def _after_fork_in_child():
    """In a fork() child (os.register_at_fork): every HNSWTables forgets
    its dispatcher, whose thread the child does not have, and gets a fresh
    lock (another parent thread may have held it at the fork); the next
    submit() starts a dispatcher of the child's own. Futures in flight at
    the fork are the parent's: they do not complete in the child (their
    queries were dropped with the parent's tasks, see Pool.h)."""
    _forked_away.extend(_dispatchers)
    _dispatchers.clear()
    for tables in list(_all_tables):
        tables._lock = threading.Lock()
        tables._dispatcher = None


os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _close_dispatchers():
    """At exit, let every dispatcher deliver what is in flight and stop,
    before the interpreter finalizes under its threads."""
    for dispatcher in list(_dispatchers):
        dispatcher.close()
        dispatcher.join(timeout=10)


class _Dispatcher:
    """One thread that waits (without the GIL) for finished tickets and
    completes their futures. It holds the queries' arrays until then, and
    none of the HNSWTables object, which may be collected meanwhile."""

    def __init__(self):
        self.completions = faiss.CcdCompletions()
        self._tickets = itertools.count()
        self._lock = threading.Lock()
        self._pending = {}  # ticket -> (future, result, buffers)
        self._thread = threading.Thread(
            target=_dispatch, args=(self.completions, self._lock,
                                    self._pending),
            name="faiss.ccd-futures", daemon=True)
        self._thread.start()
        _dispatchers.add(self)

    def expect(self, future, result, buffers):
        with self._lock:
            ticket = next(self._tickets)
            self._pending[ticket] = (future, result, buffers)
        return ticket

    def forget(self, ticket):
        with self._lock:
            self._pending.pop(ticket, None)

    def close(self):
        self.completions.close()

    def join(self, timeout=None):
        self._thread.join(timeout)


def _dispatch(completions, lock, pending):
    while True:
        c = completions.next(-1.0)
        if c.ticket == faiss.CcdCompletion.kClosed:
            return
        with lock:
            entry = pending.pop(c.ticket, None)
        if entry is None:
            continue
        future, result, _buffers = entry
        try:
            if c.ok:
                future.set_result(result)
            else:
                future.set_exception(RuntimeError(c.error))
        except concurrent.futures.InvalidStateError:
            pass  # the caller cancelled or completed it: nothing to deliver
