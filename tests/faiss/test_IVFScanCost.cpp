// IVFScanCost: the per-table scan estimates, and the split rule they feed:
// a query shared scan by scan runs alone when its split estimate says the
// shared heap makes sharing dearer than scanning alone.

#include <faiss/IVFScanCost.h>
#include <faiss/IndexIVFCCD.h>

#include "ivf_test_util.h"

#include <gtest/gtest.h>

#include <vector>

using namespace faiss::ccd;
using namespace ivf_test;
using idx_t = faiss::Index::idx_t;

namespace {

// Table ids of their own, so no other test's calls move these estimates.
constexpr uint32_t kTableA = 0x5c0a;
constexpr uint32_t kTableB = 0x5c0b;

TEST(IVFScanCost, GuessThenMovingAverage) {
    EXPECT_DOUBLE_EQ(scan_ns_per_code(kTableA, 20), kInitialNsPerCodeByte * 20);
    note_scan_cost(kTableA, 4000, 1000); // 4 ns per code: taken whole
    EXPECT_FLOAT_EQ(float(scan_ns_per_code(kTableA, 20)), 4.0f);
    note_scan_cost(kTableA, 8000, 1000); // a quarter of the way to 8
    EXPECT_FLOAT_EQ(float(scan_ns_per_code(kTableA, 20)), 5.0f);
    note_scan_cost(kTableA, 1, 0); // no codes: nothing learnt
    note_scan_cost(kTableA, -1, 10);
    EXPECT_FLOAT_EQ(float(scan_ns_per_code(kTableA, 20)), 5.0f);
    // A shape run to be measured replaces the estimate, both orders'.
    note_scan_cost(kTableA, 3000, 1000, ScanShape::other, /*fresh=*/true);
    EXPECT_FLOAT_EQ(float(scan_ns_per_code(kTableA, 20)), 3.0f);
    note_scan_cost(kTableA, 9000, 1000, ScanShape::list_major);
    note_scan_cost(kTableA, 7000, 1000, ScanShape::list_major);
    EXPECT_FLOAT_EQ(float(list_major_scan_ns_per_code(kTableA)), 8.5f);
    note_scan_cost(kTableA, 6000, 1000, ScanShape::list_major, true);
    EXPECT_FLOAT_EQ(float(list_major_scan_ns_per_code(kTableA)), 6.0f);
}

TEST(IVFScanCost, PricedCallsAreCounted) {
    constexpr uint32_t kTableC = 0x5c0c;
    ShapeHistory h = priced_call(kTableC);
    EXPECT_FALSE(h.query_major_measured);
    EXPECT_EQ(h.calls, 0);
    note_scan_cost(kTableC, 1000, 1000);
    h = priced_call(kTableC);
    EXPECT_TRUE(h.query_major_measured);
    EXPECT_EQ(h.calls, 1);
    EXPECT_EQ(priced_call(kTableC).calls, 2);
}

TEST(IVFScanCost, SplitMeasuredApartAndRetried) {
    note_scan_cost(kTableB, 2000, 1000, ScanShape::alone); // 2 ns
    // No split call yet: the split estimate is the alone one.
    EXPECT_FLOAT_EQ(float(split_scan_ns_per_code(kTableB, 8)), 2.0f);
    note_scan_cost(kTableB, 66000, 1000, ScanShape::split); // 66 ns
    EXPECT_FLOAT_EQ(float(split_scan_ns_per_code(kTableB, 8)), 66.0f);
    // ... and leaves the alone estimate alone.
    EXPECT_FLOAT_EQ(float(scan_ns_per_code(kTableB, 8)), 2.0f);
    // Each alone call takes the split estimate 1/32 of the way back.
    note_scan_cost(kTableB, 2000, 1000, ScanShape::alone);
    EXPECT_FLOAT_EQ(float(split_scan_ns_per_code(kTableB, 8)), 64.0f);
    for (int i = 0; i < 300; i++) { // 62 x (31/32)^300 < 0.01
        note_scan_cost(kTableB, 2000, 1000, ScanShape::alone);
    }
    EXPECT_LT(split_scan_ns_per_code(kTableB, 8), 2.1);
    // Other shapes feed the alone estimate only.
    note_scan_cost(kTableB, 10000, 1000, ScanShape::other);
    EXPECT_FLOAT_EQ(float(scan_ns_per_code(kTableB, 8)), 4.0f);
    EXPECT_LT(split_scan_ns_per_code(kTableB, 8), 2.1);
}

// One query at a time (the split shape): the estimates decide alone or
// shared. The estimates are set dear (a million ns per code) so that any
// hand-off pays by the alone estimate; only the split one differs.
TEST(IVFScanCost, DearSplitRunsAloneCheapSplitShares) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    auto runtime = make_runtime("1x2");
    const uint32_t table = 0x5c0c;
    IndexIVFCCD ccd(ivf.get(), runtime, table);
    SearchParametersIVFCCD params;
    params.nprobe = 16;
    const idx_t k = 100;
    std::vector<float> d_ref(k), d(k);
    std::vector<idx_t> i_ref(k), i(k);
    reference_search(
            *ivf,
            1,
            data().queries.data(),
            k,
            d_ref.data(),
            i_ref.data(),
            &params);

    auto one_call = [&](double alone_ns, double split_ns) {
        // Reset both: a split sample first would be overwritten by the
        // alone one's retry step, so alone first, then split.
        for (int r = 0; r < 8; r++) {
            note_scan_cost(table, alone_ns, 1, ScanShape::alone);
            note_scan_cost(table, split_ns, 1, ScanShape::split);
        }
        const IVFSearchCCDStats before = ivf_ccd_stats;
        ccd.search(1, data().queries.data(), k, d.data(), i.data(), &params);
        expect_same_results(1, k, d_ref, i_ref, d, i, "split rule");
        return ivf_ccd_stats.inline_calls - before.inline_calls;
    };
    // Sharing costs 3x the alone time per code: half of it is still more
    // than alone, so the caller scans alone.
    EXPECT_EQ(one_call(1e6, 3e6), 1u);
    // Sharing costs what alone does: a helper is sent.
    EXPECT_EQ(one_call(1e6, 1e6), 0u);
}

} // namespace

namespace {

constexpr uint32_t kTableTerms = 0x5c1e;

TEST(IVFScanCost, ListMajorHasItsOwnEstimate) {
    EXPECT_EQ(list_major_scan_ns_per_code(kTableTerms), 0.0);
    note_scan_cost(kTableTerms, 3000, 1000, ScanShape::other);      // 3 ns
    note_scan_cost(kTableTerms, 9000, 1000, ScanShape::list_major); // 9 ns
    EXPECT_FLOAT_EQ(float(scan_ns_per_code(kTableTerms, 16)), 3.0f);
    EXPECT_FLOAT_EQ(float(list_major_scan_ns_per_code(kTableTerms)), 9.0f);
    const ScanTerms t = scan_terms(kTableTerms, 16);
    EXPECT_FLOAT_EQ(float(t.code_ns), 3.0f);
    EXPECT_FLOAT_EQ(float(t.code_list_major_ns), 9.0f);
}

TEST(IVFScanCost, ListMajorIsComparedOnlyWithAMeasure) {
    // List-major measured, query-major still the first guess: the terms
    // leave list-major to the prior rather than weigh a measure against
    // a guess.
    constexpr uint32_t table = kTableTerms + 2;
    note_scan_cost(table, 9000, 1000, ScanShape::list_major);
    EXPECT_FLOAT_EQ(float(list_major_scan_ns_per_code(table)), 9.0f);
    EXPECT_EQ(scan_terms(table, 16).code_list_major_ns, 0.0);
    note_scan_cost(table, 3000, 1000, ScanShape::alone);
    EXPECT_FLOAT_EQ(float(scan_terms(table, 16).code_list_major_ns), 9.0f);
}

TEST(IVFScanCost, SetupTermsAreMovingAverages) {
    constexpr uint32_t table = kTableTerms + 1;
    EXPECT_FALSE(has_setup_terms(table));
    TermSample s;
    s.set_query_ns = 8000; // 4 calls of 2,000 ns
    s.set_queries = 4;
    s.set_list_ns = 300;
    s.set_lists = 3;
    note_scan_terms(table, s);
    EXPECT_TRUE(has_setup_terms(table));
    ScanTerms t = scan_terms(table, 16);
    EXPECT_FLOAT_EQ(float(t.set_query_ns), 2000.0f);
    EXPECT_FLOAT_EQ(float(t.set_list_ns), 100.0f);
    EXPECT_EQ(t.merge_ns, 0.0); // never sampled
    TermSample next;
    next.set_query_ns = 6000; // 6,000 ns: a quarter of the way there
    next.set_queries = 1;
    note_scan_terms(table, next);
    t = scan_terms(table, 16);
    EXPECT_FLOAT_EQ(float(t.set_query_ns), 3000.0f);
    EXPECT_FLOAT_EQ(float(t.set_list_ns), 100.0f); // no new sample
}

} // namespace
