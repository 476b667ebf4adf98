// consumer: a program outside the tree that links the installed fork, as
// the README's C++ section says: it only sets IndexIVF::parallel_mode. It
// checks the answers against parallel_mode 0 and that the default pool ran
// the search.
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/ccd_scheduler/Runtime.h>

#include <cstdio>
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

    std::vector<float> dis(nq * k), ref_dis(nq * k);
    std::vector<faiss::Index::idx_t> ids(nq * k), ref_ids(nq * k);
    ivf.search(nq, xq.data(), k, ref_dis.data(), ref_ids.data());

    ivf.parallel_mode = faiss::PARALLEL_MODE_CCD; // the one line that matters
    ivf.search(nq, xq.data(), k, dis.data(), ids.data());

    const auto& pool = faiss::ccd::Runtime::get_default()->pool();
    std::printf(
            "%s\nquery 0: ids %lld %lld %lld, %s\n",
            pool.topology().describe().c_str(),
            (long long)ids[0],
            (long long)ids[1],
            (long long)ids[2],
            pool.stats().to_string().c_str());
    if (dis != ref_dis || ids != ref_ids) {
        std::fprintf(stderr, "results differ from parallel_mode 0\n");
        return 1;
    }
    if (pool.stats().callers == 0) {
        std::fprintf(stderr, "the pool served no search\n");
        return 1;
    }
    return 0;
}
