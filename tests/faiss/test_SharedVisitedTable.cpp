// SharedVisitedTable (issue 28, 6): one thread's VisitedTable for tables of
// different sizes. At every query's start nothing reads as visited, even
// after a query that threw midway; a wrap wipes what queries since the
// last wrap could have marked, not the whole table; a table grown for a
// large index shrinks back; FAISS's own advance() never reaches its wrap.
// And through HNSWTables, queries that alternate between a large and a
// small table across many wraps answer as stock IndexHNSW::search.

#include <faiss/SharedVisitedTable.h>

#include <faiss/HNSWTables.h>
#include <faiss/IndexHNSW.h>

#include <gtest/gtest.h>

#include "hnsw_test_util.h"

#include <random>
#include <vector>

namespace {

using faiss::ccd::SharedVisitedTable;

/// mark_like_a_query: what HNSW::search does to the table: marks with the
/// current number, then advance(), `advances` times. Fails the test if
/// FAISS's advance would wrap (and wipe all).
void mark_like_a_query(
        faiss::VisitedTable& vt,
        size_t ntotal,
        int advances,
        std::mt19937& rng,
        bool throws = false) {
    for (int a = 0; a < advances; a++) {
        for (int m = 0; m < 20; m++) {
            const size_t i = rng() % ntotal;
            vt.set(int(i));
        }
        if (throws) {
            return; // a query that threw midway: no advance()
        }
        ASSERT_LT(vt.visno + 1, SharedVisitedTable::kWrap)
                << "FAISS's advance() would wipe the whole table";
        vt.advance();
    }
}

TEST(SharedVisitedTable, NothingReadsVisitedWhenAQueryStarts) {
    SharedVisitedTable shared;
    std::mt19937 rng(5);
    const size_t sizes[] = {200000, 1000, 70000, 30, 5000};
    for (int q = 0; q < 3000; q++) {
        // Mostly small tables, a large one now and then.
        const size_t ntotal = q % 97 == 0 ? sizes[0] : sizes[1 + q % 4];
        const int advances = 1 + int(rng() % 4);
        faiss::VisitedTable& vt = shared.for_query(ntotal, advances);
        ASSERT_GE(vt.visited.size(), ntotal);
        for (size_t i = 0; i < ntotal; i++) {
            ASSERT_FALSE(vt.get(int(i)))
                    << "query " << q << ", node " << i << " of " << ntotal;
        }
        mark_like_a_query(vt, ntotal, advances, rng, q % 13 == 0);
    }
}

TEST(SharedVisitedTable, WipesWhatWasMarkedAndShrinksBack) {
    SharedVisitedTable shared;
    std::mt19937 rng(6);
    const size_t big = 1000000, small = 1000;
    mark_like_a_query(shared.for_query(big, 1), big, 1, rng);
    EXPECT_GE(shared.length(), big);
    const int queries = 2000; // a wrap per 247: 8 wraps
    for (int q = 0; q < queries; q++) {
        mark_like_a_query(shared.for_query(small, 1), small, 1, rng);
    }
    // The first wrap wipes the large table's range once; the others only
    // the small one's. Whole-table wipes would be 8 MB.
    EXPECT_LE(shared.wiped_bytes(), big + 9 * small);
    EXPECT_GE(shared.wiped_bytes(), big);
    EXPECT_LE(shared.length(), SharedVisitedTable::kKeepBytes);
}

TEST(SharedVisitedTable, RefusesAQueryThatWouldWrapAlone) {
    SharedVisitedTable shared;
    EXPECT_THROW(
            shared.for_query(10, SharedVisitedTable::kWrap),
            faiss::FaissException);
    EXPECT_THROW(shared.for_query(10, -1), faiss::FaissException);
}

TEST(SharedVisitedTable, TablesOfTwoSizesAnswerAsStockAcrossWraps) {
    using namespace hnsw_test;
    const int d = 8;
    const auto big_base = clustered(20000, d, 20, 1);
    const auto small_base = clustered(300, d, 4, 2);
    const auto queries = clustered(600, d, 20, 3);
    auto big = make_hnsw("HNSW16", d, big_base);
    auto small = make_hnsw("HNSW8", d, small_base);
    const idx_t k = 5;
    const Answer ref_big = reference(*big, 600, queries.data(), k);
    const Answer ref_small = reference(*small, 600, queries.data(), k);
    // One worker, queries run by this thread: one SharedVisitedTable sees
    // them all, 600 queries over 2 wraps and more.
    HNSWTables tables(make_runtime("1x1"));
    tables.hand_off = 0;
    tables.add_table(1, big.get(), false);
    tables.add_table(2, small.get(), false);
    for (idx_t q = 0; q < 600; q++) {
        const bool on_big = q % 7 == 0;
        const Answer got = via_tables(
                tables,
                on_big ? 1 : 2,
                1,
                queries.data() + q * d,
                k);
        const Answer& ref = on_big ? ref_big : ref_small;
        ASSERT_TRUE(
                std::equal(got.I.begin(), got.I.end(), ref.I.begin() + q * k))
                << "query " << q << (on_big ? " (big)" : " (small)");
        ASSERT_TRUE(
                std::equal(got.D.begin(), got.D.end(), ref.D.begin() + q * k))
                << "query " << q;
    }
}

} // namespace
