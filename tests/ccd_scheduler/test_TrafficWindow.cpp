// TrafficWindow: sliding per-id totals, driven by explicit times.

#include <faiss/ccd_scheduler/TrafficWindow.h>

#include <gtest/gtest.h>

#include <stdexcept>

using namespace faiss::ccd;

namespace {

uint64_t total_of(const TrafficWindow& w, MappingId id) {
    auto it = w.totals().find(id);
    return it == w.totals().end() ? 0 : it->second;
}

TEST(TrafficWindow, SlidesBucketByBucket) {
    TrafficWindow w(10, 1);
    for (int t = 0; t < 10; t++) {
        w.add(t + 0.5, 1, 100); // 100 bytes a second on id 1
    }
    w.add(9.9, 2, 7);
    EXPECT_EQ(total_of(w, 1), 1000u);
    EXPECT_EQ(w.total_bytes(), 1007u);
    w.advance(10.0); // bucket [0,1) leaves
    EXPECT_EQ(total_of(w, 1), 900u);
    w.advance(14.2); // buckets up to [4,5) leave
    EXPECT_EQ(total_of(w, 1), 500u);
    EXPECT_EQ(total_of(w, 2), 7u);
    // At 18.5 the window is buckets [9,10) .. [18,19): the current bucket
    // and the nine before it.
    w.advance(18.5);
    EXPECT_EQ(total_of(w, 1), 100u);
    EXPECT_EQ(total_of(w, 2), 7u); // recorded at 9.9, in [9,10)
    w.advance(19.0);
    EXPECT_TRUE(w.totals().empty()); // ids with nothing left are dropped
    EXPECT_EQ(w.total_bytes(), 0u);
}

TEST(TrafficWindow, FastAndSlowSeeDifferentHistory) {
    TrafficWindow fast(10, 1), slow(60, 1);
    for (int t = 0; t < 60; t++) {
        MappingId hot = t < 30 ? 1 : 2; // the hot id changes at t = 30
        fast.add(t, hot, 10);
        slow.add(t, hot, 10);
    }
    EXPECT_EQ(total_of(fast, 1), 0u);
    EXPECT_EQ(total_of(fast, 2), 100u);
    EXPECT_EQ(total_of(slow, 1), 300u);
    EXPECT_EQ(total_of(slow, 2), 300u);
}

TEST(TrafficWindow, BackwardTimeCountsAsLatest) {
    TrafficWindow w(5, 1);
    w.add(100, 1, 1);
    w.add(50, 1, 1); // clock went back: counted now
    EXPECT_EQ(total_of(w, 1), 2u);
    w.advance(105);
    EXPECT_EQ(total_of(w, 1), 0u);
}

TEST(TrafficWindow, RejectsBadShapes) {
    EXPECT_THROW(TrafficWindow(1, 0), std::invalid_argument);
    EXPECT_THROW(TrafficWindow(1, 2), std::invalid_argument);
    EXPECT_THROW(TrafficWindow(-1, -1), std::invalid_argument);
}

} // namespace
