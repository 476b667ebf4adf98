"""The parallel mode on stock faiss IVF indexes.

    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD

makes index.search() and index.range_search() of that faiss.IndexIVF*
object run through the default pool (get_default_pool()). Setting any other
value restores FAISS's own search, with that mode.

How: importing faiss_ccd replaces the `parallel_mode` property of
faiss.IndexIVF and the search/range_search methods of faiss.IndexIVF and
its subclasses by versions that check for the mode. The mode lives on the
Python object, and the C++ field keeps the value it had: FAISS 1.7.3 does
not know the mode, and an unknown parallel_mode aborts the process when a
C++ caller (IndexIDMap, IndexShards, ...) searches the index. So:
- C++ code searching the index (a wrapper's search) uses FAISS's own
  search, as before;
- another Python object for the same C++ index (faiss.downcast_index of
  a wrapper's .index) does not carry the mode;
- a search that the pool does not do falls back to FAISS's own (decided
  by IndexIVFCCD, as for the explicit form): empty indexes, the FastScan
  family, IVFPQR and IVFFlatDedup (their search does more than scan
  lists), max_codes, IDSelectors;
- values FAISS 1.7.3 does not know raise ValueError here (FAISS itself
  would take them and abort at the next search).
Everything else about the index is unchanged: any other mode, and indexes
of other types, behave exactly as before.
"""

import itertools
import threading

import faiss
import numpy as np

from . import ivf
from ._checks import check_k
from . import swigfaiss_ccd as _swig
from .pool import get_default_pool

# Beyond FAISS's modes 0-3 and its flag PARALLEL_MODE_NO_HEAP_INIT (1024).
PARALLEL_MODE_CCD = 1 << 16
_FAISS_MODES = (0, 1, 2, 3)
_NO_HEAP_INIT = 1024

_STATE = "_faiss_ccd_parallel_mode"
# Table ids of indexes in the parallel mode: far from the small ids users
# give explicit IndexIVFCCD / HNSWTables objects.
_table_ids = itertools.count(0x80000000)
_table_ids_lock = threading.Lock()


class _ModeState:
    """The parallel mode of one Python index object: its table id and the
    handle for the pool it last searched through."""

    def __init__(self):
        with _table_ids_lock:
            self.table_id = next(_table_ids) % 0xFFFFFFFF
        self.lock = threading.Lock()
        self.pool = None
        self.handle = None

    def handle_for(self, index, pool):
        with self.lock:
            if self.pool is not pool:
                self.handle = _swig.IndexIVFCCDHandle(
                    pool._handle, int(index.this), self.table_id)
                self.pool = pool  # kept alive while the handle uses it
            return self.handle


def _mode_state(index):
    return index.__dict__.get(_STATE)


def _wrap_property(cpp_property):
    def get(self):
        if _mode_state(self) is not None:
            return PARALLEL_MODE_CCD
        return cpp_property.__get__(self)

    def set(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError("parallel_mode must be an int")
        value = int(value)
        if value != PARALLEL_MODE_CCD and \
                (value & ~_NO_HEAP_INIT) not in _FAISS_MODES:
            # FAISS 1.7.3 would take it and abort the process at search.
            raise ValueError(
                f"parallel_mode must be 0-3 (optionally | "
                f"{_NO_HEAP_INIT}) or faiss_ccd.PARALLEL_MODE_CCD, "
                f"got {value}")
        if value == PARALLEL_MODE_CCD:
            if _mode_state(self) is None:
                self.__dict__[_STATE] = _ModeState()
        else:
            cpp_property.__set__(self, int(value))
            self.__dict__.pop(_STATE, None)

    return property(get, set, doc=(
        "FAISS's parallel_mode, or faiss_ccd.PARALLEL_MODE_CCD: searches "
        "run through faiss_ccd's default pool"))


def _queries(index, x):
    """FAISS's own search converts its input; so does the mode."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2 or x.shape[1] != index.d:
        raise ValueError(
            f"x must have shape (n, {index.d}), got {x.shape}")
    return x


def _wrap_search(faiss_search):
    def search(self, x, k, *, params=None, D=None, I=None):
        state = _mode_state(self)
        if state is None:
            return faiss_search(self, x, k, params=params, D=D, I=I)
        handle = state.handle_for(self, get_default_pool())
        return ivf.search(handle, _queries(self, x), check_k(k), params, D, I)

    search.__doc__ = faiss_search.__doc__
    search._faiss_ccd_wraps = faiss_search
    return search


def _wrap_range_search(faiss_range_search):
    def range_search(self, x, thresh, *, params=None):
        state = _mode_state(self)
        if state is None:
            return faiss_range_search(self, x, thresh, params=params)
        handle = state.handle_for(self, get_default_pool())
        return ivf.range_search(handle, _queries(self, x), thresh, params)

    range_search.__doc__ = faiss_range_search.__doc__
    range_search._faiss_ccd_wraps = faiss_range_search
    return range_search


def install():
    """Install the mode on faiss's classes (idempotent)."""
    prop = faiss.IndexIVF.__dict__["parallel_mode"]
    if not hasattr(prop.fget, "_faiss_ccd"):
        wrapped = _wrap_property(prop)
        wrapped.fget._faiss_ccd = True
        faiss.IndexIVF.parallel_mode = wrapped
    for cls in vars(faiss).values():
        if not (isinstance(cls, type) and issubclass(cls, faiss.IndexIVF)):
            continue
        for name, wrap in (("search", _wrap_search),
                           ("range_search", _wrap_range_search)):
            method = cls.__dict__.get(name)
            if method is not None and not hasattr(method, "_faiss_ccd_wraps"):
                setattr(cls, name, wrap(method))
