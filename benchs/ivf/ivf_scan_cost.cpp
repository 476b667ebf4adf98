#include "ivf_scan_cost.h"

#include <faiss/invlists/InvertedLists.h>

#include <faiss/utils/Heap.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

namespace bench {
namespace ivf {

namespace {

using idx_t = faiss::Index::idx_t;
using C = faiss::CMax<float, idx_t>;
using Clock = std::chrono::steady_clock;

enum Variant { kOneHeap, kTaskPerList, kTaskPerChunk, kSeededChunk, kCount };

const char* const kNames[kCount] = {
        "one_heap",
        "task_per_list",
        "task_per_chunk",
        "seeded_chunk"};

/// Scan: one query through one variant.
struct Scan {
    const faiss::IndexIVF& index;
    const faiss::InvertedLists& il;
    size_t threshold, chunk; ///< IndexIVFCCD's split rule
    int k;
    std::vector<float> local_dis;
    std::vector<idx_t> local_ids;

    /// run: the query's sorted top-k into dis/ids; returns heaps merged.
    size_t run(
            Variant v,
            faiss::InvertedListScanner& scanner,
            const float* x,
            const idx_t* assign,
            const float* coarse,
            size_t nprobe,
            float* dis,
            idx_t* ids) {
        faiss::heap_heapify<C>(k, dis, ids);
        scanner.set_query(x);
        size_t tasks = 0;
        for (size_t p = 0; p < nprobe; p++) {
            const idx_t l = assign[p];
            const size_t size = l < 0 ? 0 : il.list_size(l);
            if (size == 0) {
                continue;
            }
            scanner.set_list(l, coarse[p]);
            faiss::InvertedLists::ScopedCodes codes(&il, l);
            faiss::InvertedLists::ScopedIds lids(&il, l);
            if (v == kOneHeap) {
                scanner.scan_codes(size, codes.get(), lids.get(), dis, ids, k);
                continue;
            }
            const size_t step =
                    v == kTaskPerList || size <= threshold ? size : chunk;
            for (size_t b = 0; b < size; b += step) {
                const size_t e = std::min(size, b + step);
                float* ld = local_dis.data();
                idx_t* li = local_ids.data();
                faiss::heap_heapify<C>(k, ld, li);
                if (v == kSeededChunk) {
                    std::fill(ld, ld + k, dis[0]);
                }
                scanner.scan_codes(
                        e - b,
                        codes.get() + b * il.code_size,
                        lids.get() + b,
                        ld,
                        li,
                        k);
                for (int j = 0; j < k; j++) {
                    if (li[j] != -1 && C::cmp(dis[0], ld[j])) {
                        faiss::heap_replace_top<C>(k, dis, ids, ld[j], li[j]);
                    }
                }
                tasks++;
            }
        }
        faiss::heap_reorder<C>(k, dis, ids);
        return tasks;
    }
};

/// cpu_seconds: CPU time of the whole process (every thread) so far.
double cpu_seconds() {
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
            1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

} // namespace

ScanCost measure_scan_cost(
        const faiss::IndexIVF& index,
        const faiss::ccd::IndexIVFCCD& ccd,
        size_t nq,
        size_t batch_nq,
        const float* queries,
        int k) {
    ScanCost r;
    r.queries = nq;
    r.k = k;
    const size_t nprobe = std::min(index.nprobe, index.nlist);
    std::vector<idx_t> assign(nq * nprobe);
    std::vector<float> coarse(nq * nprobe);
    // Coarse quantization, one query per call, then the whole set at once.
    // First let the threads of whatever ran before (OpenMP teams, BLAS)
    // stop spinning: their CPU time would count as ours.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    double t0 = cpu_seconds();
    for (size_t q = 0; q < nq; q++) {
        index.quantizer->search(
                1,
                queries + q * index.d,
                idx_t(nprobe),
                coarse.data() + q * nprobe,
                assign.data() + q * nprobe);
    }
    const double t1 = cpu_seconds();
    {
        batch_nq = std::max(batch_nq, nq);
        std::vector<idx_t> a(batch_nq * nprobe);
        std::vector<float> c(batch_nq * nprobe);
        index.quantizer->search(
                idx_t(batch_nq),
                queries,
                idx_t(nprobe),
                c.data(),
                a.data());
    }
    const double t2 = cpu_seconds();
    r.coarse_ms_single = 1000 * (t1 - t0) / double(std::max<size_t>(1, nq));
    r.coarse_ms_batch = 1000 * (t2 - t1) / double(batch_nq);
    r.coarse_batch_nq = batch_nq;

    Scan scan{index, *index.invlists, SIZE_MAX, SIZE_MAX, k, {}, {}};
    scan.local_dis.resize(k);
    scan.local_ids.resize(k);
    // The rule of IndexIVFCCD.cpp's Chunking (private there).
    const double avg = std::max(
            1.0,
            double(index.invlists->compute_ntotal()) / index.nlist);
    if (ccd.split_factor > 0) {
        scan.chunk = std::max(ccd.min_chunk, size_t(ccd.chunk_factor * avg));
        scan.threshold = std::max(scan.chunk, size_t(ccd.split_factor * avg));
    }
    std::unique_ptr<faiss::InvertedListScanner> scanner(
            index.get_InvertedListScanner(false));

    std::vector<double> seconds(kCount, 0), tasks(kCount, 0);
    std::vector<float> dis(kCount * size_t(k));
    std::vector<idx_t> ids(kCount * size_t(k));
    for (size_t q = 0; q < nq; q++) {
        // Rotate the order per query: no variant always runs first (cold).
        for (int i = 0; i < kCount; i++) {
            const Variant v = Variant((i + q) % kCount);
            const Clock::time_point t0 = Clock::now();
            tasks[v] += double(scan.run(
                    v,
                    *scanner,
                    queries + q * index.d,
                    assign.data() + q * nprobe,
                    coarse.data() + q * nprobe,
                    nprobe,
                    dis.data() + v * k,
                    ids.data() + v * k));
            seconds[v] +=
                    std::chrono::duration<double>(Clock::now() - t0).count();
        }
        bool differs = false;
        for (int v = 1; v < kCount; v++) {
            differs |= !std::equal(
                    dis.begin(),
                    dis.begin() + k,
                    dis.begin() + v * k);
        }
        r.distance_mismatches += differs;
    }
    for (int v = 0; v < kCount; v++) {
        r.variants.push_back(kNames[v]);
        r.ms_per_query.push_back(
                1000 * seconds[v] / double(std::max<size_t>(1, nq)));
        r.tasks_per_query.push_back(tasks[v] / double(std::max<size_t>(1, nq)));
    }
    return r;
}

} // namespace ivf
} // namespace bench
