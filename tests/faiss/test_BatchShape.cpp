// BatchShape: the batch shape priced from measured terms (issue 29). The
// costs below are what this machine measured (faiss.scan_terms after
// three CCD-mode calls of 4,000 queries over 200,000 x 64 clustered
// vectors, nprobe 16): the PQ case list-major lost on, and Flat, where it
// wins. The rule before the terms (list-major from 64 queries over probed
// lists of 16 KB on average) took list-major for both.

#include <faiss/BatchShape.h>

#include <gtest/gtest.h>

using namespace faiss::ccd;

namespace {

// IVF256,PQ16: 64,000 items of 1,787 codes on average (28.6 KB of codes).
BatchCounts pq_batch() {
    BatchCounts b;
    b.queries = 4000;
    b.items = 64000;
    b.codes = 114357752;
    b.code_size = 16;
    return b;
}

ScanTerms pq_terms() {
    ScanTerms t;
    t.set_query_ns = 3525; // the query's distance tables
    t.set_list_ns = 1222;
    t.merge_ns = 499;
    t.code_ns = 8.06; // query-major, whole units
    return t;
}

// IVF1024,Flat: 64,000 items of 230 codes (57 KB).
BatchCounts flat_batch() {
    BatchCounts b;
    b.queries = 4000;
    b.items = 64000;
    b.codes = 14709232;
    b.code_size = 256;
    return b;
}

ScanTerms flat_terms() {
    ScanTerms t;
    t.set_query_ns = 36;
    t.set_list_ns = 80;
    t.merge_ns = 245;
    t.code_ns = 12.39;
    return t;
}

TEST(BatchShape, PQBeforeListMajorRanStaysQueryMajor) {
    // The old rule's inputs: lists past 16 KB, a batch past 64 queries.
    const BatchCounts b = pq_batch();
    ASSERT_GE(b.codes * b.code_size / b.items, 16384);
    // 60,000 more set_query calls (211 ms) against 46 ms of cache saved.
    EXPECT_FALSE(prefer_list_major(pq_terms(), b));
    EXPECT_NEAR(
            list_major_ns(pq_terms(), b) - query_major_ns(pq_terms(), b),
            60000 * 3525.0 - 114357752 * 0.4,
            1e3);
}

TEST(BatchShape, PQMeasuredListMajorStaysQueryMajor) {
    // What forced list-major calls measured on the same index.
    ScanTerms t = pq_terms();
    t.code_list_major_ns = 9.58;
    EXPECT_FALSE(prefer_list_major(t, pq_batch()));
}

TEST(BatchShape, FlatPriorTakesListMajor) {
    // 2 ms of set_query calls against 73 ms of cache saved.
    EXPECT_TRUE(prefer_list_major(flat_terms(), flat_batch()));
}

TEST(BatchShape, MeasuredListMajorDecides) {
    ScanTerms t = flat_terms();
    t.code_list_major_ns = 5.75; // as measured: taken
    EXPECT_TRUE(prefer_list_major(t, flat_batch()));
    t.code_list_major_ns = 13.0; // measured dearer: not taken again
    EXPECT_FALSE(prefer_list_major(t, flat_batch()));
}

TEST(BatchShape, SmallListsSaveNothing) {
    // Lists of 2.5 KB stay in cache between a query's neighbours: with
    // free set-ups list-major only ties, and a tie stays query-major.
    ScanTerms t = flat_terms();
    t.set_query_ns = 0;
    BatchCounts b = flat_batch();
    b.codes = b.items * 10; // 10 codes of 256 bytes per list
    EXPECT_DOUBLE_EQ(list_major_ns(t, b), query_major_ns(t, b));
    EXPECT_FALSE(prefer_list_major(t, b));
}

TEST(BatchShape, SavingIsCappedAtAFractionOfTheCost) {
    ScanTerms t = flat_terms();
    t.set_query_ns = 0;
    t.code_ns = 1; // cheaper per code than 256 bytes' saving could be
    const BatchCounts b = flat_batch();
    EXPECT_NEAR(
            list_major_ns(t, b),
            b.codes * (1 - kReuseMaxSaving),
            1e-3 * b.codes);
}

TEST(BatchShape, PriorIsPutToTheTestByOneQueryMajorCall) {
    // The prior takes list-major; with query-major never measured here,
    // the call goes query-major, and once it was, the prior decides.
    ShapeHistory h;
    EXPECT_TRUE(prefer_list_major(flat_terms(), flat_batch()));
    EXPECT_FALSE(choose_list_major(flat_terms(), flat_batch(), h).list_major);
    EXPECT_TRUE(choose_list_major(flat_terms(), flat_batch(), h).explore);
    h.query_major_measured = true;
    h.calls = 1;
    EXPECT_TRUE(choose_list_major(flat_terms(), flat_batch(), h).list_major);
    // A measured list-major 9% dearer (issue 29's SQ8 batch): query-major.
    ScanTerms t = flat_terms();
    t.code_list_major_ns = 1.09 * t.code_ns;
    EXPECT_FALSE(choose_list_major(t, flat_batch(), h).list_major);
}

TEST(BatchShape, CloseShapesAreMeasuredAgainFarOnesNever) {
    ShapeHistory h;
    h.query_major_measured = true;
    ScanTerms t = flat_terms();
    t.code_list_major_ns = 1.09 * t.code_ns; // close: retried
    int tried = 0;
    for (h.calls = 0; h.calls < 4 * kShapeRetryEvery; h.calls++) {
        tried += choose_list_major(t, flat_batch(), h).list_major;
    }
    EXPECT_EQ(tried, 4);
    // The other way round: list-major chosen, query-major retried, even
    // measured far dearer (a first call's cold measure).
    t.code_list_major_ns = t.code_ns / 3;
    tried = 0;
    for (h.calls = 0; h.calls < 4 * kShapeRetryEvery; h.calls++) {
        tried += !choose_list_major(t, flat_batch(), h).list_major;
    }
    EXPECT_EQ(tried, 4);
    // PQ's list-major, 3.4x dearer as measured, is never tried again.
    ScanTerms pq = pq_terms();
    pq.code_list_major_ns = 3.4 * pq.code_ns;
    for (h.calls = 0; h.calls < 4 * kShapeRetryEvery; h.calls++) {
        EXPECT_FALSE(choose_list_major(pq, pq_batch(), h).list_major);
    }
}

} // namespace

// The coarse cut: none before the quantizer was measured, nor when a
// participant's part is under kCoarseSliceHandoffs hand-offs; slices of
// whole aligned rows (at least the BLAS threshold), the remainder in the
// last one.
TEST(BatchShape, CoarseCutPaysForItsHandoffsAndKeepsTheRows) {
    using faiss::ccd::coarse_cut;
    using faiss::ccd::CoarseCut;
    const double handoff = 20000; // ns, a parked worker here
    CoarseCut c = coarse_cut(4000, 0, handoff, 2, 20);
    EXPECT_EQ(c.rows, 0);
    EXPECT_EQ(c.slices, 1);
    EXPECT_EQ(c.helpers, 0);
    // IVF256 at d 64 measured 750 ns a query: 4,000 queries are 1.5 ms a
    // participant, over 4 hand-offs of 20 us. 16 slices wanted, of 250
    // queries: 256 rows each, 15 of them, then the remainder of 160 as its
    // own (at least 64), not joined to the 15th.
    c = coarse_cut(4000, 750, handoff, 2, 20);
    EXPECT_EQ(c.rows, 256);
    EXPECT_EQ(c.slices, 16);
    EXPECT_EQ(c.helpers, 1);
    // 4,000 - 15 * 256 = 160; at 3,860 the remainder of 20 joins the 15th.
    c = coarse_cut(3860, 750, handoff, 2, 20);
    EXPECT_EQ(c.rows, 256);
    EXPECT_EQ(c.slices, 15);
    // 64 queries are 24 us a participant (and under two aligned slices).
    c = coarse_cut(64, 750, handoff, 2, 20);
    EXPECT_EQ(c.slices, 1);
    EXPECT_EQ(c.helpers, 0);
    c = coarse_cut(4000, 10, handoff, 2, 20); // 20 us a participant
    EXPECT_EQ(c.slices, 1);
    // 16 participants, 200 queries: 3 slices of 64 rows (the last 72).
    c = coarse_cut(200, 1e6, handoff, 16, 20);
    EXPECT_EQ(c.rows, 64);
    EXPECT_EQ(c.slices, 3);
    EXPECT_EQ(c.helpers, 2);
    // A BLAS threshold of 100 rounds the rows up to 128.
    c = coarse_cut(1000, 1e6, handoff, 2, 100);
    EXPECT_EQ(c.rows, 128);
    EXPECT_EQ(c.slices, 7);
    // Under load (one participant), one call however dear.
    c = coarse_cut(4000, 1e6, handoff, 1, 20);
    EXPECT_EQ(c.slices, 1);
    EXPECT_EQ(c.helpers, 0);
}
