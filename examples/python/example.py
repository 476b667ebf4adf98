"""example.py: stock FAISS indexes searched through a CCD-aware pool."""
import faiss
import numpy as np

import faiss_ccd

d, nb = 32, 20000
rs = np.random.RandomState(123)
xb = rs.rand(nb, d).astype(np.float32)
xq = xb[:4]  # the first vectors as queries

index = faiss.index_factory(d, "IVF64,Flat")
index.train(xb)
index.add(xb)
index.nprobe = 8

# One pool for the process: FAISS_CCD_TOPOLOGY, else hwloc's L3 domains.
pool = faiss_ccd.Pool(topology="auto", policy="ccd")
print(pool.topology())

# 1. Switch a stock index to the new parallel mode (the default pool).
faiss_ccd.set_default_pool(pool)
index.parallel_mode = faiss_ccd.PARALLEL_MODE_CCD
D, I = index.search(xq, 5)
print("IVF nearest:", I[:, 0])
index.parallel_mode = 0  # back to FAISS's own OpenMP search

# 2. Or wrap it explicitly, one table id per index sharing the pool.
ivf_ccd = faiss_ccd.IndexIVFCCD(index, pool, table_id=1)
lims, D, I = ivf_ccd.range_search(xq, 3.0)
print("neighbours within 3.0:", np.diff(lims))

# 3. Many HNSW tables, one task per query on its table's CCD.
hnsw = faiss.IndexHNSWFlat(d, 16)
hnsw.add(xb)
tables = faiss_ccd.HNSWTables(pool)
tables.add_table(7, hnsw)
D, I = tables.search(7, xq, 5)
future = tables.submit(7, xq[0], 5)  # a concurrent.futures.Future
print("HNSW nearest:", I[:, 0], "async:", future.result()[1][0])

stats = pool.stats()
print(stats["tasks_run"], "tasks,", stats["tasks_run_per_ccd"], "per CCD")
