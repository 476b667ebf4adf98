/**
 * Tests for WorkStealingDeque: LIFO pop and FIFO steal, the full deque, the
 * capacity check, and exactly-once delivery with one owner and eight
 * thieves racing for the same tasks.
 */

#include <faiss/ccd_scheduler/detail/WorkStealingDeque.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "queue_test_util.h"
#include "stress_scale.h"

using ccd_test::NodeArray;
using ccd_test::Sink;
using faiss::ccd::TaskNode;
using faiss::ccd::WorkStealingDeque;

namespace {

/// index: the number of what a queue returned, -1 for nullptr or a stranger.
int64_t index(const NodeArray& nodes, const TaskNode* p) {
    return p == nullptr ? -1 : nodes.index_of(p);
}

} // namespace

TEST(WorkStealingDeque, PopIsLifoStealIsFifo) {
    NodeArray nodes(5);
    WorkStealingDeque dq(8);
    EXPECT_EQ(dq.capacity(), 8u);
    EXPECT_EQ(dq.pop(), nullptr);
    EXPECT_EQ(dq.steal(), nullptr);
    for (int i = 0; i < 5; i++) {
        ASSERT_TRUE(dq.push(nodes.at(i)));
    }
    EXPECT_EQ(dq.size_estimate(), 5);
    EXPECT_EQ(index(nodes, dq.steal()), 0); // oldest
    EXPECT_EQ(index(nodes, dq.pop()), 4);   // newest
    EXPECT_EQ(index(nodes, dq.steal()), 1);
    EXPECT_EQ(index(nodes, dq.pop()), 3);
    EXPECT_EQ(dq.size_estimate(), 1);
    EXPECT_EQ(index(nodes, dq.pop()), 2); // the last one, taken by the owner
    EXPECT_EQ(dq.pop(), nullptr);
    EXPECT_EQ(dq.steal(), nullptr);
    EXPECT_EQ(dq.size_estimate(), 0);

    // The last task taken by a steal leaves the deque usable by the owner.
    ASSERT_TRUE(dq.push(nodes.at(0)));
    EXPECT_EQ(index(nodes, dq.steal()), 0);
    EXPECT_EQ(dq.pop(), nullptr);
    ASSERT_TRUE(dq.push(nodes.at(1)));
    EXPECT_EQ(index(nodes, dq.pop()), 1);
}

TEST(WorkStealingDeque, PushFailsWhenFullAndLosesNothing) {
    NodeArray nodes(9);
    WorkStealingDeque dq(8);
    for (int i = 0; i < 8; i++) {
        ASSERT_TRUE(dq.push(nodes.at(i))) << "push " << i;
    }
    EXPECT_FALSE(dq.push(nodes.at(8)));
    EXPECT_FALSE(dq.push(nodes.at(8))); // still full, still refused
    EXPECT_EQ(dq.size_estimate(), 8);

    // Everything accepted is still there, in order, and the refused node is
    // not: steal the oldest half, pop the newest half.
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(index(nodes, dq.steal()), i);
    }
    for (int i = 7; i >= 4; i--) {
        EXPECT_EQ(index(nodes, dq.pop()), i);
    }
    EXPECT_EQ(dq.pop(), nullptr);
    EXPECT_EQ(dq.steal(), nullptr);

    // One slot freed by a steal is enough for one more push.
    for (int i = 0; i < 8; i++) {
        ASSERT_TRUE(dq.push(nodes.at(i)));
    }
    EXPECT_EQ(index(nodes, dq.steal()), 0);
    EXPECT_TRUE(dq.push(nodes.at(8)));
    EXPECT_FALSE(dq.push(nodes.at(0)));
    EXPECT_EQ(index(nodes, dq.pop()), 8);
}

TEST(WorkStealingDeque, WrapsAroundTheRing) {
    // Many laps of the 8 slots, mixing pops and steals, checking order.
    NodeArray nodes(6);
    WorkStealingDeque dq(8);
    for (int lap = 0; lap < 1000; lap++) {
        SCOPED_TRACE(lap);
        for (int i = 0; i < 6; i++) {
            ASSERT_TRUE(dq.push(nodes.at(i)));
        }
        ASSERT_EQ(index(nodes, dq.steal()), 0);
        ASSERT_EQ(index(nodes, dq.steal()), 1);
        ASSERT_EQ(index(nodes, dq.pop()), 5);
        ASSERT_EQ(index(nodes, dq.steal()), 2);
        ASSERT_EQ(index(nodes, dq.pop()), 4);
        ASSERT_EQ(index(nodes, dq.pop()), 3);
        ASSERT_EQ(dq.pop(), nullptr);
    }
}

TEST(WorkStealingDeque, ConstructorRejectsNonPowerOfTwo) {
    for (uint32_t bad : {0u, 1u, 3u, 6u, 12u, 1000u, 4097u}) {
        EXPECT_THROW(WorkStealingDeque{bad}, std::invalid_argument)
                << "capacity " << bad;
    }
    for (uint32_t good : {2u, 8u, 1024u, 65536u}) {
        WorkStealingDeque dq(good);
        EXPECT_EQ(dq.capacity(), good);
    }
}

namespace {

constexpr int kThieves = 8;

/// StressResult: what the owner saw, for sanity checks on the test itself.
struct StressResult {
    int64_t full = 0;   ///< pushes refused because the deque was full
    int64_t popped = 0; ///< nodes the owner took back
    int64_t stolen = 0; ///< nodes the thieves took
};

/// run_owner_and_thieves: the owner pushes nodes 0..n-1 in order, mixing in
/// pops at random (in phases that fill the deque and phases that drain it),
/// and pops one itself whenever the deque is full; eight thieves steal until
/// the owner has drained the deque. Checks exactly-once delivery.
StressResult
run_owner_and_thieves(int64_t n, uint32_t capacity, uint64_t seed) {
    NodeArray nodes(n);
    WorkStealingDeque dq(capacity);
    std::vector<Sink> out(kThieves + 1);
    std::atomic<bool> owner_done{false};
    ccd_test::SpinBarrier start(kThieves + 1);
    StressResult r;

    std::vector<std::thread> thieves;
    for (int t = 0; t < kThieves; t++) {
        thieves.emplace_back([&, t] {
            Sink& mine = out[size_t(t) + 1];
            mine.got.reserve(size_t(n / kThieves));
            ccd_test::Backoff backoff;
            start.arrive_and_wait();
            // acquire: pairs with the owner's release below; the deque is
            // empty for good once the owner has seen it empty.
            while (!owner_done.load(std::memory_order_acquire)) {
                if (const TaskNode* p = dq.steal()) {
                    mine.take(nodes, p);
                } else {
                    backoff.idle();
                }
            }
        });
    }

    std::thread owner([&] {
        Sink& mine = out[0];
        mine.got.reserve(size_t(n));
        std::mt19937_64 rng(seed);
        start.arrive_and_wait();
        int64_t next = 0;
        // Hand-off: the first nodes go to the thieves alone (the owner waits
        // for them to empty the deque), so some steals happen at any scale.
        while (next < std::min<int64_t>(n, capacity / 2)) {
            dq.push(nodes.fill(next++));
        }
        const auto deadline =
                std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (dq.size_estimate() > 0 &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
        }
        int push_percent = 90;
        for (int64_t ops = 1; next < n; ops++) {
            // Phases of 4096 operations alternate between filling (90% push)
            // and draining (30% push, so pops often race for the last task).
            if (ops % 4096 == 0) {
                push_percent = push_percent == 90 ? 30 : 90;
            }
            if (int(rng() % 100) < push_percent) {
                if (dq.push(nodes.fill(next))) {
                    next++;
                } else {
                    r.full++;
                    if (const TaskNode* p = dq.pop()) {
                        mine.take(nodes, p);
                    }
                }
            } else if (const TaskNode* p = dq.pop()) {
                mine.take(nodes, p);
            }
        }
        // Drain. Only the owner pushes, so once pop() comes back empty every
        // node has been taken by someone.
        while (const TaskNode* p = dq.pop()) {
            mine.take(nodes, p);
        }
        owner_done.store(true, std::memory_order_release);
    });

    owner.join();
    for (std::thread& t : thieves) {
        t.join();
    }
    EXPECT_TRUE(ccd_test::exactly_once(nodes, out));
    EXPECT_EQ(dq.size_estimate(), 0);
    EXPECT_EQ(dq.pop(), nullptr);
    EXPECT_EQ(dq.steal(), nullptr);
    r.popped = int64_t(out[0].got.size());
    for (int t = 1; t <= kThieves; t++) {
        r.stolen += int64_t(out[size_t(t)].got.size());
    }
    return r;
}

} // namespace

TEST(WorkStealingDeque, StressOwnerAndEightThieves) {
    const int64_t n = scaled(1000000);
    // A small deque, so that the owner often finds it full.
    StressResult r = run_owner_and_thieves(n, 64, 12345);
    // The test tests something only if every path ran.
    EXPECT_GT(r.full, 0) << "the deque never filled up";
    EXPECT_GT(r.popped, 0);
    EXPECT_GT(r.stolen, 0) << "no thief ever stole";
    RecordProperty("nodes", std::to_string(n));
    RecordProperty("popped", std::to_string(r.popped));
    RecordProperty("stolen", std::to_string(r.stolen));
    RecordProperty("full", std::to_string(r.full));
}

TEST(WorkStealingDeque, StressPopRacesSteal) {
    // The owner pushes one or two tasks, tells the thieves, waits a random
    // moment and pops until empty: every pop() may race a steal() for the
    // last task (the t == b case: the seq_cst fence and the CAS keep both
    // from winning). The thieves spin without yielding, so use one per spare
    // core: a thief that is not running races nobody.
    const int thieves_n = std::max(
            1,
            std::min(kThieves, int(std::thread::hardware_concurrency()) - 1));
    const int64_t n = scaled(500000);
    NodeArray nodes(n);
    WorkStealingDeque dq(2);
    std::vector<Sink> out(size_t(thieves_n) + 1);
    // published: the last node the owner pushed; a thief steals once per
    // node it sees published. release/acquire: nothing rides on it (the
    // deque publishes the node itself); it only times the thieves.
    std::atomic<int64_t> published{-1};
    std::atomic<bool> owner_done{false};
    ccd_test::SpinBarrier start(thieves_n + 1);

    std::vector<std::thread> thieves;
    for (int t = 0; t < thieves_n; t++) {
        thieves.emplace_back([&, t] {
            Sink& mine = out[size_t(t) + 1];
            start.arrive_and_wait();
            int64_t seen = -1;
            uint32_t spins = 0;
            while (!owner_done.load(std::memory_order_acquire)) {
                const int64_t now = published.load(std::memory_order_acquire);
                if (now == seen) {
                    if (++spins % 1024 == 0) {
                        std::this_thread::yield(); // oversubscribed machine
                    }
                    faiss::ccd::detail::cpu_relax();
                    continue;
                }
                seen = now;
                for (int k = 0; k < 2; k++) {
                    if (const TaskNode* p = dq.steal()) {
                        mine.take(nodes, p);
                    }
                }
            }
            // The owner has seen the deque empty after its last pop.
        });
    }
    int64_t first_bad = -1; // a node that push() refused, or after which
                            // the deque was not empty again
    std::thread owner([&] {
        Sink& mine = out[0];
        mine.got.reserve(size_t(n));
        std::mt19937_64 rng(777);
        start.arrive_and_wait();
        for (int64_t i = 0; i < n && first_bad < 0;) {
            // One node, or two: with two, the owner's pop takes the newer
            // one without a CAS while thieves take the older one, which is
            // safe only thanks to the fence in pop() (this needs two thieves
            // running at once, so three cores, to go wrong).
            const int64_t end = std::min(n, i + 1 + int64_t(rng() & 1));
            for (; i < end; i++) {
                if (!dq.push(nodes.fill(i))) {
                    first_bad = i;
                }
            }
            published.store(i - 1, std::memory_order_release);
            // A random pause, so that the thieves' steals land before,
            // during and after the pops.
            for (int k = int(rng() % 64); k > 0; k--) {
                faiss::ccd::detail::cpu_relax();
            }
            while (const TaskNode* p = dq.pop()) {
                mine.take(nodes, p);
            }
            if (dq.size_estimate() != 0) {
                first_bad = i - 1;
            }
        }
        owner_done.store(true, std::memory_order_release);
    });
    owner.join();
    for (std::thread& t : thieves) {
        t.join();
    }
    ASSERT_EQ(first_bad, -1);
    EXPECT_TRUE(ccd_test::exactly_once(nodes, out));
    int64_t stolen = 0;
    for (int t = 1; t <= thieves_n; t++) {
        stolen += int64_t(out[size_t(t)].got.size());
    }
    RecordProperty("thieves", std::to_string(thieves_n));
    RecordProperty("stolen", std::to_string(stolen));
}
