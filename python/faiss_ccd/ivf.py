"""IndexIVFCCD: IVF search whose probed-list scans run on a faiss_ccd.Pool.

It wraps a faiss.IndexIVF* object as it is (no copy) and keeps a reference
to it and to the pool, so neither goes away while the wrapper lives.
Results equal the wrapped index's own search (same distances; the same
labels except among exactly tied distances).
"""

import math
import numbers

import faiss
import numpy as np

from . import swigfaiss_ccd as _swig
from ._checks import (address, check_float32_matrix, check_k, check_output,
                      check_table_id, index_address, params_address)
from .pool import Pool


class IndexIVFCCD:
    """IndexIVFCCD(index, pool, table_id=0)

    index: any faiss.IndexIVF* (IVFFlat, IVFPQ, IVFScalarQuantizer, ...).
        Some run FAISS's own (OpenMP) search instead (uses_scanners is
        False): the FastScan family, which has no per-list scanner, and
        IVFPQR and IVFFlatDedup, whose search does more than scan lists.
        So do searches of an empty index, with max_codes, or with an
        IDSelector in the params.
    pool: a faiss_ccd.Pool.
    table_id: the high half of this index's task keys, 0 .. 2**32 - 2;
        give each index sharing a pool its own.

    search() and range_search() may be called from many Python threads at
    once: the GIL is released while they run. As in FAISS, do not add to
    or train the index while it is being searched.
    """

    def __init__(self, index, pool, table_id=0):
        ivf_address = index_address(index, faiss.IndexIVF, "index")
        if not isinstance(pool, Pool):
            raise TypeError(
                f"pool must be a faiss_ccd.Pool, not {type(pool).__name__}")
        table_id = check_table_id(table_id)
        self._index = index  # kept alive as long as this wrapper
        self._pool = pool
        self._handle = _swig.IndexIVFCCDHandle(
            pool._handle, ivf_address, table_id)

    @property
    def index(self):
        """The wrapped faiss index."""
        return self._index

    @property
    def pool(self):
        return self._pool

    @property
    def d(self):
        return self.index.d

    @property
    def ntotal(self):
        return self.index.ntotal

    @property
    def table_id(self):
        return self._handle.table_id()

    @property
    def uses_scanners(self):
        """False for indexes searched by FAISS's own search (FastScan)."""
        return self._handle.uses_scanners()

    def search(self, x, k, *, params=None, D=None, I=None):
        """x: float32 array (n, d). Returns D (n, k) float32 and I (n, k)
        int64, best first; -1 labels past the last result. params: a
        faiss.SearchParametersIVF (nprobe, ...)."""
        x = check_float32_matrix("x", x, self.index.d)
        return search(self._handle, x, check_k(k), params, D, I)

    def range_search(self, x, thresh, *, params=None):
        """Returns lims (n + 1), D and I as faiss's range_search does: the
        results of query i are D[lims[i]:lims[i + 1]]."""
        x = check_float32_matrix("x", x, self.index.d)
        return range_search(self._handle, x, thresh, params)

    def __repr__(self):
        return (f"faiss_ccd.IndexIVFCCD({type(self.index).__name__}, "
                f"d={self.d}, ntotal={self.ntotal}, "
                f"table_id={self.table_id})")


def search(handle, x, k, params, D, I):
    """Search checked inputs through a handle; the GIL is released."""
    n = x.shape[0]
    D = check_output("D", D, (n, k), np.float32)
    I = check_output("I", I, (n, k), np.int64)
    handle.search(n, address(x), k, address(D), address(I),
                  params_address(params, faiss.SearchParametersIVF))
    return D, I


def range_search(handle, x, thresh, params):
    if isinstance(thresh, bool) or not isinstance(thresh, numbers.Real):
        raise TypeError(
            f"thresh must be a number, not {type(thresh).__name__}")
    if math.isnan(thresh):
        raise ValueError("thresh must not be NaN")
    n = x.shape[0]
    result = handle.range_search(
        n, address(x), float(thresh),
        params_address(params, faiss.SearchParametersIVF))
    lims = np.empty(n + 1, dtype=np.uint64)
    total = result.total()
    D = np.empty(total, dtype=np.float32)
    I = np.empty(total, dtype=np.int64)
    result.copy_to(address(lims), address(D), address(I))
    return lims, D, I
