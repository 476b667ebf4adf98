"""HNSWTables: many faiss.IndexHNSW* tables searched through one pool, one
query per task.

All queries of a table go to the CCD the pool's placement gives the table,
so its hot graph nodes stay in that CCD's L3. Results equal
IndexHNSW.search run on one thread with the same efSearch.
"""

import atexit
import concurrent.futures
import itertools
import threading
import weakref

import faiss
import numpy as np

from . import swigfaiss_ccd as _swig
from ._checks import (address, check_float32_matrix, check_int, check_k,
                      check_output, check_table_id, index_address,
                      params_address)
from .pool import Pool


class HNSWTables:
    """HNSWTables(pool)

    add_table(table_id, index, ef_search=None) registers a faiss.IndexHNSW*
    object as it is (no copy) and keeps it referenced until
    remove_table(table_id) has returned, which it does once no query uses
    the table any more; a submitted query keeps its index referenced until
    its future is done. search() blocks; submit() returns a
    concurrent.futures.Future. Every method may be called from many Python
    threads at once (the GIL is released while C++ runs). As in FAISS, do not
    modify a registered index.

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
                f"pool must be a faiss_ccd.Pool, not {type(pool).__name__}")
        self._pool = pool
        self._handle = _swig.HNSWTablesHandle(pool._handle)
        self._lock = threading.Lock()
        self._indexes = {}  # table id -> index, guarded by _lock
        self._dispatcher = None  # guarded by _lock
        self._closed = False  # guarded by _lock

    @property
    def pool(self):
        return self._pool

    # ------------------------------------------------------------ tables

    def add_table(self, table_id, index, ef_search=None):
        table_id = check_table_id(table_id)
        hnsw_address = index_address(index, faiss.IndexHNSW, "index")
        ef = -1 if ef_search is None else check_int("ef_search", ef_search, 1)
        with self._lock:
            if table_id in self._indexes:
                raise ValueError(f"table id {table_id} is already taken")
            self._handle.add_table(table_id, hnsw_address, ef)
            self._indexes[table_id] = index

    def remove_table(self, table_id):
        """Unregister; returns once queries in flight on it are done.
        Other calls do not wait meanwhile; the id may be added again as
        soon as this returns."""
        table_id = check_table_id(table_id)
        with self._lock:
            index = self._indexes.pop(table_id, None)
        if index is None:
            raise KeyError(f"unknown table id {table_id}")
        # Unregisters at once, then waits (without the GIL) for queries in
        # flight; only then may `index` be dropped.
        self._handle.remove_table(table_id)
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
        table_id = check_table_id(table_id)
        with self._lock:
            index = self._indexes.get(table_id)
        if index is None:
            raise KeyError(f"unknown table id {table_id}")
        return table_id, index

    # ------------------------------------------------------------ search

    def search(self, table_id, x, k, *, params=None):
        """x: float32 (n, d). Returns D (n, k), I (n, k)."""
        table_id, index = self._index(table_id)
        x = check_float32_matrix("x", x, index.d)
        k = check_k(k)
        n = x.shape[0]
        D = check_output("D", None, (n, k), np.float32)
        I = check_output("I", None, (n, k), np.int64)
        self._handle.search(
            table_id, n, address(x), index.d, k, address(D), address(I),
            params_address(params, faiss.SearchParametersHNSW))
        return D, I

    def submit(self, table_id, x, k, *, params=None):
        """Like search(), returning at once a concurrent.futures.Future of
        (D, I). x: (d,) for one query (then D and I have shape (k,)) or
        (n, d). Input errors raise here; errors while searching arrive
        through the future."""
        table_id, index = self._index(table_id)
        one = isinstance(x, np.ndarray) and x.ndim == 1
        x = check_float32_matrix("x", x, index.d, allow_vector=True)
        k = check_k(k)
        n = x.shape[0]
        if n == 0:
            raise ValueError("submit: x holds no query")
        D = np.empty((n, k), dtype=np.float32)
        I = np.empty((n, k), dtype=np.int64)
        future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        result = (D[0], I[0]) if one else (D, I)
        dispatcher = self._get_dispatcher()
        # Everything the query reads or writes stays referenced until its
        # completion is popped, the index included.
        ticket = dispatcher.expect(future, result, (x, D, I, params, index))
        try:
            self._handle.submit(
                table_id, n, address(x), index.d, k, address(D), address(I),
                params_address(params, faiss.SearchParametersHNSW), ticket,
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
        return f"faiss_ccd.HNSWTables({len(self)} tables)"


_dispatchers = weakref.WeakSet()


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
        self.completions = _swig.Completions()
        self._tickets = itertools.count()
        self._lock = threading.Lock()
        self._pending = {}  # ticket -> (future, result, buffers)
        self._thread = threading.Thread(
            target=_dispatch, args=(self.completions, self._lock,
                                    self._pending),
            name="faiss_ccd-futures", daemon=True)
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
        if c.ticket == _swig.Completion.kClosed:
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
