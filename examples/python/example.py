"""example.py: FAISS indexes searched through the CCD-aware pool."""
import faiss
import numpy as np

d, nb = 32, 20000
rs = np.random.RandomState(123)
xb = rs.rand(nb, d).astype(np.float32)
xq = xb[:4]  # the first vectors as queries

# The pool: FAISS_CCD_TOPOLOGY, else hwloc's L3 domains; policy "ccd".
pool = faiss.ccd.Pool(topology="auto", policy="ccd")
faiss.ccd.set_default_pool(pool)
print(pool.topology())

# 1. The CCD mode on an IVF index: its searches run on the default pool,
#    and so do those of whatever wraps it (IDMap, PreTransform, Shards...).
index = faiss.index_factory(d, "IDMap2,IVF64,Flat")
index.train(xb)
index.add_with_ids(xb, np.arange(nb) + 1000)
ivf = faiss.extract_index_ivf(index)
ivf.nprobe = 8
ivf.parallel_mode = faiss.PARALLEL_MODE_CCD
D, I = index.search(xq, 5)
print("IVF nearest:", I[:, 0])

# 2. Or one call through a given pool, with its task shape.
params = faiss.SearchParametersIVFCCD(nprobe=16, runtime=pool.runtime)
lims, D, I = ivf.range_search(xq, 3.0, params=params)
print("neighbours within 3.0:", np.diff(lims))

# 3. Many HNSW tables; a query runs on its table's CCD (in the calling
#    thread when that is the caller's CCD, or the machine has one CCD).
hnsw = faiss.IndexHNSWFlat(d, 16)
hnsw.add(xb)
tables = faiss.ccd.HNSWTables(pool)
tables.add_table(7, hnsw)
D, I = tables.search(7, xq, 5)
future = tables.submit(7, xq[0], 5)  # a concurrent.futures.Future
print("HNSW nearest:", I[:, 0], "async:", future.result()[1][0])

stats = pool.stats()
print(stats["tasks_run"], "tasks,", stats["tasks_run_per_ccd"], "per CCD")
