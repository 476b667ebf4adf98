// consumer: a program outside the tree using an installed faiss-ccd, as the
// README's C++ example. It builds an IVF index with stock FAISS, searches it
// through the CCD pool, and checks the answers against stock search.
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFCCD.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/ccd_scheduler/Runtime.h>

#include <cstdio>
#include <memory>
#include <random>
#include <vector>

int main() {
    const int d = 32, nb = 20000, nq = 10, k = 5;
    std::mt19937 rng(123);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<float> xb(size_t(nb) * d), xq(size_t(nq) * d);
    for (float& v : xb)
        v = u(rng);
    for (float& v : xq)
        v = u(rng);

    faiss::IndexFlatL2 quantizer(d);
    faiss::IndexIVFFlat ivf(&quantizer, d, 64);
    ivf.train(nb, xb.data());
    ivf.add(nb, xb.data());
    ivf.nprobe = 8;

    // One runtime per process: topology from FAISS_CCD_TOPOLOGY or hwloc.
    auto runtime = faiss::ccd::Runtime::get_default();
    std::printf("%s\n", runtime->pool().topology().describe().c_str());
    faiss::ccd::IndexIVFCCD index(&ivf, runtime, /*table_id=*/1);

    std::vector<float> dis(nq * k), ref_dis(nq * k);
    std::vector<faiss::Index::idx_t> ids(nq * k), ref_ids(nq * k);
    index.search(nq, xq.data(), k, dis.data(), ids.data());
    ivf.search(nq, xq.data(), k, ref_dis.data(), ref_ids.data());

    std::printf(
            "query 0: ids %lld %lld %lld, %s\n",
            (long long)ids[0],
            (long long)ids[1],
            (long long)ids[2],
            runtime->pool().stats().to_string().c_str());
    if (dis != ref_dis) {
        std::fprintf(stderr, "results differ from stock FAISS\n");
        return 1;
    }
    return 0;
}
