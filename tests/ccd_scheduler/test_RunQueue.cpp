/**
 * Tests for RunQueue: the order in which its three parts are drained, the
 * overflow path, the counters, and the pool's shape under stress: one owner
 * (push_local + pop_local), concurrent submitters (push_external) and eight
 * thieves (steal); everything pushed comes out exactly once.
 */

#include <faiss/ccd_scheduler/detail/RunQueue.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "queue_test_util.h"
#include "stress_scale.h"

using ccd_test::NodeArray;
using ccd_test::Sink;
using faiss::ccd::RunQueue;
using faiss::ccd::TaskNode;

namespace {

int64_t index(const NodeArray& nodes, const TaskNode* p) {
    return p == nullptr ? -1 : nodes.index_of(p);
}

} // namespace

TEST(RunQueue, PopLocalOrderDequeThenRingThenOverflow) {
    NodeArray nodes(12);
    RunQueue q(4, 4);
    // Nodes 0-3 fill the deque, 4-5 overflow from it; 6-9 fill the ring,
    // 10-11 overflow from it.
    for (int i = 0; i < 6; i++) {
        q.push_local(nodes.at(i));
    }
    for (int i = 6; i < 12; i++) {
        q.push_external(nodes.at(i));
    }
    EXPECT_EQ(q.overflow_pushes(), 4u);
    EXPECT_EQ(q.pushes_total(), 12u);
    EXPECT_EQ(q.size_estimate(), 12);

    // Deque LIFO, then ring FIFO, then overflow FIFO.
    for (int i : {3, 2, 1, 0, 6, 7, 8, 9, 4, 5, 10, 11}) {
        EXPECT_EQ(index(nodes, q.pop_local()), i);
    }
    EXPECT_EQ(q.pop_local(), nullptr);
    EXPECT_EQ(q.steal(), nullptr);
    EXPECT_EQ(q.size_estimate(), 0);
    EXPECT_EQ(q.pushes_total(), 12u); // monotone
    EXPECT_EQ(q.overflow_pushes(), 4u);
}

TEST(RunQueue, StealOrderDequeThenRingThenOverflow) {
    NodeArray nodes(12);
    RunQueue q(4, 4);
    for (int i = 0; i < 6; i++) {
        q.push_local(nodes.at(i));
    }
    for (int i = 6; i < 12; i++) {
        q.push_external(nodes.at(i));
    }
    // Deque FIFO, then ring FIFO, then overflow FIFO.
    for (int i : {0, 1, 2, 3, 6, 7, 8, 9, 4, 5, 10, 11}) {
        EXPECT_EQ(index(nodes, q.steal()), i);
    }
    EXPECT_EQ(q.steal(), nullptr);
    EXPECT_EQ(q.pop_local(), nullptr);
    EXPECT_EQ(q.size_estimate(), 0);
}

TEST(RunQueue, CountersWithoutOverflow) {
    NodeArray nodes(4);
    RunQueue q(8, 8);
    q.push_local(nodes.at(0));
    q.push_external(nodes.at(1));
    EXPECT_EQ(q.pushes_total(), 2u);
    EXPECT_EQ(q.overflow_pushes(), 0u);
    EXPECT_EQ(q.size_estimate(), 2);
    EXPECT_EQ(index(nodes, q.steal()), 0);
    EXPECT_EQ(index(nodes, q.pop_local()), 1);
    EXPECT_EQ(q.pushes_total(), 2u);
}

namespace {

constexpr int kSubmitters = 3;
constexpr int kThieves = 8;

} // namespace

TEST(RunQueue, StressOwnerSubmittersAndThieves) {
    // Nodes [0, n_local) are the owner's; submitter s pushes the rest with
    // index % kSubmitters == s. Small deque and ring, so that a good share
    // of the traffic takes the overflow path.
    const int64_t n = scaled(1000000);
    const int64_t n_local = n / 4;
    NodeArray nodes(n);
    RunQueue q(16, 16);

    // out[0]: the owner; out[1..kThieves]: the thieves.
    std::vector<Sink> out(size_t(1 + kThieves));
    std::atomic<int64_t> consumed{0};
    // Pops after which pushes_total() was below what had been consumed: a
    // task came out before its push was counted.
    std::atomic<int64_t> uncounted{0};
    ccd_test::SpinBarrier start(1 + kSubmitters + kThieves);

    // take: record a node; then check that pushes_total() already counts
    // every node consumed so far. acq_rel on `consumed`: our pop, and the
    // pops before ours in the counter's order, happen before the load.
    auto take = [&](Sink& mine, const TaskNode* t) {
        mine.take(nodes, t);
        const int64_t so_far =
                consumed.fetch_add(1, std::memory_order_acq_rel) + 1;
        if (int64_t(q.pushes_total()) < so_far) {
            uncounted.fetch_add(1, std::memory_order_relaxed);
        }
    };

    std::vector<std::thread> threads;
    threads.emplace_back([&] { // the owner
        Sink& mine = out[0];
        mine.got.reserve(size_t(n / 2));
        std::mt19937_64 rng(42);
        ccd_test::Backoff backoff;
        start.arrive_and_wait();
        int64_t next = 0;
        while (next < n_local) {
            // Bursts of up to 48 pushes (the deque holds 16), then up to 48
            // pops, which also drain the ring and the overflow.
            for (int k = int(rng() % 48); k >= 0 && next < n_local; k--) {
                q.push_local(nodes.fill(next++));
            }
            for (int k = int(rng() % 48); k >= 0; k--) {
                const TaskNode* t = q.pop_local();
                if (t == nullptr) {
                    break;
                }
                take(mine, t);
            }
        }
        while (consumed.load(std::memory_order_relaxed) < n) {
            if (const TaskNode* t = q.pop_local()) {
                take(mine, t);
            } else {
                backoff.idle();
            }
        }
    });
    for (int s = 0; s < kSubmitters; s++) {
        threads.emplace_back([&, s] {
            start.arrive_and_wait();
            for (int64_t i = n_local + s; i < n; i += kSubmitters) {
                q.push_external(nodes.fill(i));
            }
        });
    }
    for (int t = 0; t < kThieves; t++) {
        threads.emplace_back([&, t] {
            Sink& mine = out[size_t(1 + t)];
            ccd_test::Backoff backoff;
            start.arrive_and_wait();
            while (consumed.load(std::memory_order_relaxed) < n) {
                if (const TaskNode* p = q.steal()) {
                    take(mine, p);
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
    EXPECT_EQ(q.pushes_total(), uint64_t(n));
    EXPECT_EQ(q.size_estimate(), 0);
    EXPECT_EQ(q.pop_local(), nullptr);
    EXPECT_EQ(q.steal(), nullptr);
    EXPECT_GT(q.overflow_pushes(), 0u) << "the overflow path never ran";
    EXPECT_EQ(uncounted.load(), 0)
            << "pushes_total() lagged behind the tasks already popped";

    int64_t stolen = 0;
    for (int t = 1; t <= kThieves; t++) {
        stolen += int64_t(out[size_t(t)].got.size());
    }
    RecordProperty("overflow_pushes", std::to_string(q.overflow_pushes()));
    RecordProperty("popped_by_owner", std::to_string(out[0].got.size()));
    RecordProperty("stolen", std::to_string(stolen));
}
