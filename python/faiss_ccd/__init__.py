"""faiss_ccd: a CCD-aware parallel backend for FAISS.

    import faiss, faiss_ccd

    pool = faiss_ccd.Pool(topology="auto", policy="ccd")

    # stock indexes: switch the parallel mode
    index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD   # default pool
    D, I = index.search(xq, 10)

    # or explicitly
    D, I = faiss_ccd.IndexIVFCCD(index, pool, table_id=1).search(xq, 10)

    tables = faiss_ccd.HNSWTables(pool)
    tables.add_table(7, hnsw_index)
    future = tables.submit(7, xq[0], 10)

See the README's "Using it from Python".
"""

import faiss  # noqa: F401  (the module links the same FAISS version)

from .hnsw import HNSWTables
from .ivf import IndexIVFCCD
from .parallel_mode import PARALLEL_MODE_CCD, install as _install
from .pool import POLICIES, Pool, get_default_pool, set_default_pool

__all__ = [
    "HNSWTables",
    "IndexIVFCCD",
    "PARALLEL_MODE_CCD",
    "POLICIES",
    "Pool",
    "get_default_pool",
    "set_default_pool",
]

_install()
