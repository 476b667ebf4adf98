// TrafficWindow: sliding per-id totals, driven by explicit times.

#include <faiss/ccd_scheduler/TrafficWindow.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

// Found by fuzz_scheduler_config (window-buckets): shapes whose bucket
// count or index would not fit an int64_t.
TEST(TrafficWindow, RejectsWindowsItCannotCount) {
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_THROW(TrafficWindow(inf, 1), std::invalid_argument);
    EXPECT_THROW(TrafficWindow(1, std::nan("")), std::invalid_argument);
    EXPECT_THROW(TrafficWindow(1, 1e-300), std::invalid_argument);
    EXPECT_THROW(TrafficWindow(1e8, 1), std::invalid_argument);
    EXPECT_NO_THROW(TrafficWindow(1e7, 1));
    EXPECT_NO_THROW(TrafficWindow(1, 1e-6));
    // The smallest bucket at a clock far from its epoch (bucket-index):
    // the index saturates instead of overflowing.
    TrafficWindow w(1e-6, 1e-6);
    w.add(1e16, 7, 100);
    EXPECT_EQ(total_of(w, 7), 100u);
    w.advance(1e300);
    EXPECT_EQ(total_of(w, 7), 100u) << "saturated: the same bucket";
}

// Found by fuzz_scheduler_config (zero-bytes): two zero-byte records of one
// id in different buckets crashed the window when both expired. They carry
// no traffic and leave no entry.
TEST(TrafficWindow, ZeroByteRecordsAddNothing) {
    TrafficWindow w(2, 1);
    w.add(0, 7, 0);
    w.add(1, 7, 0);
    w.add(1, 8, 5);
    EXPECT_EQ(w.totals().count(7), 0u);
    EXPECT_EQ(w.total_bytes(), 5u);
    w.advance(10);
    EXPECT_TRUE(w.totals().empty());
    EXPECT_EQ(w.total_bytes(), 0u);
}

} // namespace
