// example.cpp: IVF and HNSW search through the CCD-aware pool.
#include <faiss/HNSWTables.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVF.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/index_factory.h>

#include <cstdio>
#include <memory>
#include <random>
#include <vector>

int main() {
    const int d = 32, nb = 20000, nq = 4, k = 5;
    std::mt19937 rng(123);
    std::uniform_real_distribution<float> uniform;
    std::vector<float> xb(size_t(nb) * d);
    for (float& v : xb) {
        v = uniform(rng);
    }
    const float* xq = xb.data(); // the first nq vectors as queries

    // An IVF index, as FAISS makes it...
    std::unique_ptr<faiss::Index> index(faiss::index_factory(d, "IVF64,Flat"));
    index->train(nb, xb.data());
    index->add(nb, xb.data());
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(index.get());
    ivf->nprobe = 8;
    // ... in the CCD mode: one task per (query, probed list), keyed by the
    // list, on the process's default pool (FAISS_CCD_TOPOLOGY, else
    // hwloc's L3s), whose monitor re-maps lists as traffic drifts.
    ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
    std::vector<float> D(nq * k);
    std::vector<faiss::Index::idx_t> I(nq * k);
    index->search(nq, xq, k, D.data(), I.data());
    for (int q = 0; q < nq; q++) {
        std::printf(
                "IVF  query %d: nearest %ld (%.3f)\n",
                q,
                long(I[q * k]),
                D[q * k]);
    }

    // HNSW: many tables; a query runs on its table's CCD.
    auto runtime = faiss::ccd::Runtime::get_default();
    std::printf("%s\n", runtime->pool().topology().describe().c_str());
    faiss::IndexHNSWFlat hnsw(d, 16);
    hnsw.add(nb, xb.data());
    faiss::ccd::HNSWTables tables(runtime);
    tables.add_table(7, &hnsw, /*own_index=*/false);
    tables.search(7, nq, xq, k, D.data(), I.data());
    std::printf("HNSW query 0: nearest %ld (%.3f)\n", long(I[0]), D[0]);
    auto future = tables.search_async(7, std::vector<float>(xq, xq + d), k);
    std::printf("async query:  nearest %ld\n", long(future.get().labels[0]));
    tables.remove_table(7).wait(); // before `hnsw` goes

    std::printf("%s\n", runtime->pool().stats().to_string().c_str());
    return 0;
}
