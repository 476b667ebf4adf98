/**
 * Tests for SubmitRing: FIFO order, the full ring, the capacity check,
 * pushes_claimed(), and exactly-once delivery with many producers and many
 * consumers (4 + 4, and the pool's shape: 3 submitters, one owner and eight
 * thieves all popping).
 */

#include <faiss/ccd_scheduler/detail/SubmitRing.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "queue_test_util.h"
#include "stress_scale.h"

using ccd_test::NodeArray;
using ccd_test::Sink;
using faiss::ccd::SubmitRing;
using faiss::ccd::TaskNode;

namespace {

int64_t index(const NodeArray& nodes, const TaskNode* p) {
    return p == nullptr ? -1 : nodes.index_of(p);
}

} // namespace

TEST(SubmitRing, FifoSingleThread) {
    NodeArray nodes(5);
    SubmitRing ring(8);
    EXPECT_EQ(ring.pop(), nullptr);
    for (int i = 0; i < 5; i++) {
        ASSERT_TRUE(ring.push(nodes.at(i)));
    }
    EXPECT_EQ(ring.size_estimate(), 5);
    EXPECT_EQ(ring.pushes_claimed(), 5u);
    for (int i = 0; i < 5; i++) {
        EXPECT_EQ(index(nodes, ring.pop()), i);
    }
    EXPECT_EQ(ring.pop(), nullptr);
    EXPECT_EQ(ring.size_estimate(), 0);
    EXPECT_EQ(ring.pushes_claimed(), 5u); // monotone: pops do not lower it
}

TEST(SubmitRing, PushFailsWhenFullAndLosesNothing) {
    NodeArray nodes(9);
    SubmitRing ring(8);
    for (int i = 0; i < 8; i++) {
        ASSERT_TRUE(ring.push(nodes.at(i))) << "push " << i;
    }
    EXPECT_FALSE(ring.push(nodes.at(8)));
    EXPECT_FALSE(ring.push(nodes.at(8)));
    EXPECT_EQ(ring.size_estimate(), 8);
    // A refused push claims nothing.
    EXPECT_EQ(ring.pushes_claimed(), 8u);

    // One pop frees one cell for one push.
    EXPECT_EQ(index(nodes, ring.pop()), 0);
    EXPECT_TRUE(ring.push(nodes.at(8)));
    EXPECT_FALSE(ring.push(nodes.at(0)));
    for (int i = 1; i <= 8; i++) {
        EXPECT_EQ(index(nodes, ring.pop()), i);
    }
    EXPECT_EQ(ring.pop(), nullptr);
    EXPECT_EQ(ring.pushes_claimed(), 9u);
}

TEST(SubmitRing, WrapsAroundInOrder) {
    // Many laps of the 8 cells with the ring never quite empty: positions
    // run far past the capacity, order must hold throughout.
    const int n = 10000;
    NodeArray nodes(n);
    SubmitRing ring(8);
    int pushed = 0, popped = 0;
    while (popped < n) {
        // Push up to 5 at a time, pop 3 at a time: the fill level wanders
        // up to full and back.
        for (int k = 0; k < 5 && pushed < n; k++) {
            if (!ring.push(nodes.at(pushed))) {
                break;
            }
            pushed++;
        }
        for (int k = 0; k < 3 && popped < pushed; k++) {
            ASSERT_EQ(index(nodes, ring.pop()), popped);
            popped++;
        }
        ASSERT_EQ(ring.size_estimate(), pushed - popped);
    }
    EXPECT_EQ(ring.pop(), nullptr);
    EXPECT_EQ(ring.pushes_claimed(), uint64_t(n));
}

TEST(SubmitRing, ConstructorRejectsNonPowerOfTwo) {
    for (uint32_t bad : {0u, 1u, 3u, 6u, 12u, 1000u, 1025u}) {
        EXPECT_THROW(SubmitRing{bad}, std::invalid_argument)
                << "capacity " << bad;
    }
    for (uint32_t good : {2u, 8u, 1024u, 65536u}) {
        EXPECT_NO_THROW(SubmitRing{good}) << "capacity " << good;
    }
}

namespace {

/// MpmcResult: counts that say whether the run exercised what it should.
struct MpmcResult {
    int64_t full = 0;                  ///< refused pushes (retried)
    std::vector<int64_t> per_consumer; ///< nodes each consumer got
};

/// run_mpmc: `producers` threads push nodes 0..n-1 (producer p pushes the
/// nodes i with i % producers == p, in increasing order, retrying when the
/// ring is full); `consumers` threads pop until all n are out. Checks
/// exactly-once delivery, and FIFO as far as it is observable: a consumer
/// sees the nodes of any one producer in the order they were pushed.
MpmcResult run_mpmc(int producers, int consumers, int64_t n, uint32_t cap) {
    NodeArray nodes(n);
    SubmitRing ring(cap);
    std::vector<Sink> out(static_cast<size_t>(consumers));
    std::atomic<int64_t> consumed{0};
    std::atomic<int64_t> full{0};
    ccd_test::SpinBarrier start(producers + consumers);

    std::vector<std::thread> threads;
    for (int p = 0; p < producers; p++) {
        threads.emplace_back([&, p] {
            ccd_test::Backoff backoff;
            int64_t my_full = 0;
            start.arrive_and_wait();
            for (int64_t i = p; i < n; i += producers) {
                nodes.fill(i);
                while (!ring.push(nodes.at(i))) {
                    my_full++;
                    backoff.idle();
                }
            }
            full.fetch_add(my_full, std::memory_order_relaxed);
        });
    }
    for (int c = 0; c < consumers; c++) {
        threads.emplace_back([&, c] {
            Sink& mine = out[size_t(c)];
            mine.got.reserve(size_t(n / consumers));
            ccd_test::Backoff backoff;
            start.arrive_and_wait();
            // relaxed: the counter only says when to stop; what was popped
            // is read after the join.
            while (consumed.load(std::memory_order_relaxed) < n) {
                if (const TaskNode* t = ring.pop()) {
                    mine.take(nodes, t);
                    consumed.fetch_add(1, std::memory_order_relaxed);
                } else {
                    backoff.idle();
                }
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }

    EXPECT_TRUE(ccd_test::exactly_once(nodes, out));
    EXPECT_EQ(ring.pop(), nullptr);
    EXPECT_EQ(ring.size_estimate(), 0);
    EXPECT_EQ(ring.pushes_claimed(), uint64_t(n));

    MpmcResult r;
    r.full = full.load();
    int64_t out_of_order = 0;
    for (int c = 0; c < consumers; c++) {
        std::vector<int64_t> last(size_t(producers), -1);
        for (const TaskNode* t : out[size_t(c)].got) {
            const int64_t i = nodes.index_of(t);
            if (i < 0) {
                continue; // reported by exactly_once
            }
            int64_t& prev = last[size_t(i % producers)];
            out_of_order += i < prev;
            prev = i;
        }
        r.per_consumer.push_back(int64_t(out[size_t(c)].got.size()));
    }
    EXPECT_EQ(out_of_order, 0)
            << "a consumer saw a producer's nodes out of push order";
    return r;
}

std::string join(const std::vector<int64_t>& v) {
    std::string s;
    for (int64_t x : v) {
        s += (s.empty() ? "" : ",") + std::to_string(x);
    }
    return s;
}

} // namespace

TEST(SubmitRing, StressFourProducersFourConsumers) {
    const int64_t n = scaled(1000000);
    MpmcResult r = run_mpmc(4, 4, n, 64);
    RecordProperty("full", std::to_string(r.full));
    RecordProperty("per_consumer", join(r.per_consumer));
}

TEST(SubmitRing, StressOwnerEightThievesThreeProducers) {
    // Consumer 0 plays the owner, 1..8 the thieves; SubmitRing makes no
    // difference between them (all use pop()), so this is the same check
    // with the pool's thread counts.
    const int64_t n = scaled(1000000);
    MpmcResult r = run_mpmc(3, 9, n, 64);
    RecordProperty("full", std::to_string(r.full));
    RecordProperty("per_consumer", join(r.per_consumer));
}
