// FifoGate: never more than `slots` inside, admission in arrival order,
// every entry exactly once. (The pool's CallerScope, built on it:
// test_CallerScope.cpp.)

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

} // namespace
} // namespace ccd
} // namespace faiss
