// Allocation-level properties of the FAISS glue (issue 28, 6), with the
// global operator new replaced in this executable alone: counted in every
// thread, and failing on demand in the thread that asks.
//  - HNSWTables::add_table that fails to store its entry leaves an owned
//    index to the caller (it used to delete it, and the caller again).
//  - A range search in the CCD mode allocates per participant, not per
//    (query, list) scan.

#include <faiss/HNSWTables.h>

#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVF.h>
#include <faiss/impl/AuxIndexStructures.h>

#include <gtest/gtest.h>

#include "../faiss/hnsw_test_util.h"
#include "../faiss/ivf_test_util.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

namespace {

std::atomic<uint64_t> allocations{0};
/// fail_in: in this thread, the allocation that brings it from 1 to 0
/// throws std::bad_alloc (0: none armed).
thread_local int fail_in = 0;

void* counted_new(std::size_t size) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (fail_in > 0 && --fail_in == 0) {
        throw std::bad_alloc();
    }
    void* p = std::malloc(size == 0 ? 1 : size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

} // namespace

void* operator new(std::size_t size) {
    return counted_new(size);
}
void* operator new[](std::size_t size) {
    return counted_new(size);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}

namespace {

using faiss::ccd::HNSWTables;
using idx_t = faiss::Index::idx_t;

/// CountedHNSW: an IndexHNSWFlat that counts its deletions.
struct CountedHNSW : faiss::IndexHNSWFlat {
    static inline std::atomic<int> deleted{0};
    CountedHNSW(int d, int m) : faiss::IndexHNSWFlat(d, m) {}
    ~CountedHNSW() override {
        deleted++;
    }
};

TEST(AddTableFailure, AnIndexNotStoredStaysTheCallers) {
    const int d = 8;
    const auto base = hnsw_test::clustered(500, d, 5, 1);
    auto* index = new CountedHNSW(d, 8);
    index->add(500, base.data());
    HNSWTables tables(hnsw_test::make_runtime("1x1"));
    // Fail the 1st, 2nd, ... allocation of add_table until one succeeds:
    // the entry, its promise's state, the map's node, its buckets.
    int failures = 0;
    bool added = false;
    for (int nth = 1; nth <= 16 && !added; nth++) {
        fail_in = nth;
        try {
            tables.add_table(1, index, /*own_index=*/true);
            added = true;
        } catch (const std::bad_alloc&) {
            failures++;
            // Not stored, and not deleted: the caller still owns it.
            ASSERT_EQ(CountedHNSW::deleted.load(), 0)
                    << "allocation " << nth << " failed and add_table "
                    << "deleted an index it did not take";
            ASSERT_FALSE(tables.has_table(1)) << "allocation " << nth;
        }
        fail_in = 0;
    }
    ASSERT_TRUE(added);
    EXPECT_GE(failures, 2); // at least the entry and the map's node
    // Stored at last: the tables own it, and delete it once.
    tables.remove_table(1).wait();
    EXPECT_EQ(CountedHNSW::deleted.load(), 1);
}

TEST(RangeSearchAllocations, PerParticipantNotPerScan) {
    using namespace ivf_test;
    auto runtime = ivf_test::make_runtime("1x2");
    faiss::ccd::Runtime::set_default(runtime);
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 16;
    const idx_t n = 500;
    const float* x = data().queries.data();
    // A radius that keeps a few dozen hits per query: the 10th nearest
    // distance of the first query.
    std::vector<float> d10(10);
    std::vector<idx_t> i10(10);
    ivf->search(1, x, 10, d10.data(), i10.data());
    const float radius = d10[9];
    faiss::RangeSearchResult ref(n);
    ivf->range_search(n, x, radius, &ref); // mode 0: the reference
    ASSERT_GT(ref.lims[n], size_t(n)) << "too few hits to say anything";

    ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
    {
        faiss::RangeSearchResult warm(n);
        ivf->range_search(n, x, radius, &warm);
    }
    runtime->pool().wait_idle();
    faiss::RangeSearchResult got(n);
    const uint64_t before = allocations.load();
    ivf->range_search(n, x, radius, &got);
    runtime->pool().wait_idle();
    const uint64_t used = allocations.load() - before;
    // n * nprobe = 8,000 scans; the hits need a buffer (two arrays) per
    // 1,024. Before, each scan made its own partial result: 3 a scan.
    const uint64_t scans = uint64_t(n) * ivf->nprobe;
    const uint64_t buffers = got.lims[n] / 1024 + 1;
    EXPECT_LT(used, scans / 8 + 3 * buffers)
            << used << " allocations for " << scans << " scans and "
            << got.lims[n] << " hits";

    // And the same hits as mode 0, per query, in any order.
    ASSERT_EQ(got.lims[n], ref.lims[n]);
    for (idx_t q = 0; q < n; q++) {
        ASSERT_EQ(got.lims[q + 1], ref.lims[q + 1]) << q;
        std::vector<std::pair<idx_t, float>> a, b;
        for (size_t j = ref.lims[q]; j < ref.lims[q + 1]; j++) {
            a.emplace_back(ref.labels[j], ref.distances[j]);
            b.emplace_back(got.labels[j], got.distances[j]);
        }
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        ASSERT_EQ(a, b) << q;
    }
    faiss::ccd::Runtime::set_default(nullptr);
}

} // namespace
