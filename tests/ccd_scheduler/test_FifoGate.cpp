// FifoGate: never more than `slots` inside, admission in arrival order,
// every entry exactly once; and the pool's CallerScope built on it.

#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/detail/FifoGate.h>

#include "stress_scale.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace faiss {
namespace ccd {
namespace {

using detail::FifoGate;

void wait_until_waiting(const FifoGate& gate, uint32_t n) {
    while (gate.waiting() < n) {
        std::this_thread::yield();
    }
}

TEST(FifoGate, AdmitsInArrivalOrder) {
    FifoGate gate(1);
    gate.enter();
    const int n = 6;
    std::mutex mutex;
    std::vector<int> order;
    std::vector<std::thread> threads;
    for (int i = 0; i < n; i++) {
        threads.emplace_back([&, i] {
            gate.enter();
            {
                std::lock_guard<std::mutex> lock(mutex);
                order.push_back(i);
            }
            gate.leave();
        });
        // Thread i holds its ticket before thread i + 1 starts.
        wait_until_waiting(gate, uint32_t(i + 1));
    }
    gate.leave();
    for (std::thread& t : threads) {
        t.join();
    }
    ASSERT_EQ(order.size(), size_t(n));
    for (int i = 0; i < n; i++) {
        EXPECT_EQ(order[i], i);
    }
    EXPECT_EQ(gate.waiting(), 0u);
}

TEST(FifoGate, StressNeverMoreThanSlotsInside) {
    for (uint32_t slots : {1u, 2u, 3u}) {
        FifoGate gate(slots);
        const int threads_n = 6;
        const int rounds = int(scaled(20000) / threads_n);
        std::atomic<int> inside{0};
        std::atomic<int> max_inside{0};
        std::atomic<int64_t> entries{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < threads_n; t++) {
            threads.emplace_back([&] {
                for (int r = 0; r < rounds; r++) {
                    gate.enter();
                    const int now = inside.fetch_add(1) + 1;
                    int seen = max_inside.load();
                    while (now > seen &&
                           !max_inside.compare_exchange_weak(seen, now)) {
                    }
                    entries.fetch_add(1);
                    inside.fetch_sub(1);
                    gate.leave();
                }
            });
        }
        for (std::thread& t : threads) {
            t.join();
        }
        EXPECT_LE(max_inside.load(), int(slots));
        EXPECT_EQ(entries.load(), int64_t(threads_n) * rounds);
        EXPECT_EQ(inside.load(), 0);
        EXPECT_EQ(gate.waiting(), 0u);
    }
}

// CallerScope with fifo_callers: outside threads beyond num_workers + 1
// wait; a nested scope and a worker's scope never wait.
TEST(CallerScope, GatesOutsidersOnlyAndNests) {
    PoolOptions options;
    options.fifo_callers = true;
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd, options);
    std::atomic<bool> holder_in{false};
    std::atomic<bool> holder_out{false};
    std::atomic<bool> third_in{false};
    std::thread holder, third;
    {
        Pool::CallerScope outer(pool);
        Pool::CallerScope nested(pool); // would deadlock if gated
        EXPECT_EQ(nested.others(), 0);  // its own thread, counted once
        std::atomic<bool> worker_in{false};
        pool.submit(kLocalMappingId, [&] {
            Pool::CallerScope in_worker(pool);
            worker_in.store(true);
        });
        pool.wait_idle();
        EXPECT_TRUE(worker_in.load());
        // Two slots (one worker + 1): a second outsider enters...
        holder = std::thread([&] {
            Pool::CallerScope s(pool);
            holder_in.store(true);
            while (!holder_out.load()) {
                std::this_thread::yield();
            }
        });
        while (!holder_in.load()) {
            std::this_thread::yield();
        }
        // ...a third waits for one of us.
        third = std::thread([&] {
            Pool::CallerScope s(pool);
            third_in.store(true);
        });
        for (int i = 0; i < 1000; i++) {
            std::this_thread::yield();
        }
        EXPECT_FALSE(third_in.load());
    }
    third.join();
    EXPECT_TRUE(third_in.load());
    holder_out.store(true);
    holder.join();
}

TEST(CallerScope, NoGateByDefault) {
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd);
    Pool::CallerScope second(pool); // two slots would be taken
    Pool::CallerScope outer(pool);
    std::atomic<bool> in{false};
    std::thread t([&] {
        Pool::CallerScope s(pool);
        in.store(true);
    });
    t.join();
    EXPECT_TRUE(in.load());
}

} // namespace
} // namespace ccd
} // namespace faiss
