/**
 * Tests for Parker, at the mechanism level: the state flips, the timed wait,
 * and no lost wake-up when the unpark() races the owner going to sleep
 * (before its futex_wait, during it, or after it).
 */

#include <faiss/ccd_scheduler/detail/Parker.h>

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "queue_test_util.h"
#include "stress_scale.h"

using faiss::ccd::Parker;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

constexpr int64_t kOneSecondNs = 1000000000;

} // namespace

TEST(Parker, StateFlips) {
    Parker p;
    EXPECT_FALSE(p.is_parked());
    p.prepare();
    EXPECT_TRUE(p.is_parked());
    p.cancel();
    EXPECT_FALSE(p.is_parked());
}

TEST(Parker, UnparkOnAwakeParkerReturnsFalse) {
    Parker p;
    EXPECT_FALSE(p.unpark()); // never parked
    p.prepare();
    p.cancel();
    EXPECT_FALSE(p.unpark()); // parked, then cancelled
    p.prepare();
    EXPECT_TRUE(p.unpark());  // parked: this call wakes it...
    EXPECT_FALSE(p.unpark()); // ...and the next one finds it awake
    EXPECT_FALSE(p.is_parked());
}

TEST(Parker, UnparkBeforeWaitIsNotLost) {
    // The unpark() lands between prepare() and wait(): wait() must return at
    // once, and say it was woken.
    Parker p;
    p.prepare();
    ASSERT_TRUE(p.unpark());
    const auto t0 = Clock::now();
    EXPECT_TRUE(p.wait(10 * kOneSecondNs));
    EXPECT_LT(seconds_since(t0), 5.0);
    EXPECT_FALSE(p.is_parked());
}

TEST(Parker, TimedWaitWithoutUnparkReturnsFalse) {
    Parker p;
    const int64_t timeout_ns = 50 * 1000 * 1000; // 50 ms
    p.prepare();
    const auto t0 = Clock::now();
    EXPECT_FALSE(p.wait(timeout_ns));
    // At least the timeout; no upper bound (loaded CI machines).
    EXPECT_GE(seconds_since(t0), 0.05);
    // A wait that ran out leaves the parker awake: nothing for unpark() to
    // do, nothing left for the next prepare() to trip over.
    EXPECT_FALSE(p.is_parked());
    EXPECT_FALSE(p.unpark());
}

TEST(Parker, TimedWaitIsNotCutShortByASignal) {
    // A signal makes futex_wait return early (EINTR). wait() must go back to
    // sleep until its deadline, not report a time-out early: false means
    // "the time ran out", and callers size their sleeps by it.
    struct sigaction sa = {};
    struct sigaction old = {};
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; // no SA_RESTART: the interrupted futex call returns
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);

    Parker p;
    const pthread_t owner = pthread_self();
    std::atomic<bool> done{false};
    std::thread pest([&] {
        while (!done.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (!done.load()) {
                pthread_kill(owner, SIGUSR1);
            }
        }
    });
    const int64_t timeout_ns = 200 * 1000 * 1000; // 200 ms
    p.prepare();
    const auto t0 = Clock::now();
    const bool woken = p.wait(timeout_ns);
    const double elapsed = seconds_since(t0);
    done.store(true);
    pest.join();
    sigaction(SIGUSR1, &old, nullptr);

    EXPECT_FALSE(woken);
    EXPECT_GE(elapsed, 0.2) << "wait() gave up before its timeout";
    EXPECT_FALSE(p.is_parked());
}

namespace {

/// WakeRounds: what a no-lost-wake-up run observed.
struct WakeRounds {
    int64_t rounds = 0;   ///< rounds the owner ran
    int64_t woken = 0;    ///< wait() returned true
    int64_t slow = 0;     ///< wait() took >= 0.9 s (a wake-up was lost)
    int64_t unparked = 0; ///< unpark() calls that returned true, all wakers
};

/// run_wake_rounds: the owner prepare()s and wait()s (1 s timeout) `rounds`
/// times; `wakers` threads each spin until is_parked() and unpark(). Stops
/// early after a few slow rounds, so that a broken parker fails in seconds,
/// not hours.
WakeRounds run_wake_rounds(int64_t rounds, int wakers) {
    Parker p;
    std::atomic<bool> stop{false};
    std::atomic<int64_t> unparked{0};
    ccd_test::SpinBarrier start(1 + wakers);
    WakeRounds r;

    std::vector<std::thread> threads;
    for (int w = 0; w < wakers; w++) {
        threads.emplace_back([&] {
            int64_t mine = 0;
            uint32_t spins = 0;
            start.arrive_and_wait();
            while (!stop.load(std::memory_order_acquire)) {
                if (p.is_parked()) {
                    mine += p.unpark();
                } else if (++spins % 1024 == 0) {
                    // Rarely: several wakers racing for one round need to
                    // run at once, which a yield after each miss prevents.
                    std::this_thread::yield();
                } else {
                    faiss::ccd::detail::cpu_relax();
                }
            }
            unparked.fetch_add(mine, std::memory_order_relaxed);
        });
    }
    threads.emplace_back([&] {
        start.arrive_and_wait();
        for (int64_t i = 0; i < rounds && r.slow < 3; i++) {
            p.prepare();
            const auto t0 = Clock::now();
            r.woken += p.wait(kOneSecondNs);
            r.slow += seconds_since(t0) >= 0.9;
            r.rounds++;
        }
        stop.store(true, std::memory_order_release);
    });
    for (std::thread& t : threads) {
        t.join();
    }
    r.unparked = unparked.load();
    return r;
}

} // namespace

TEST(Parker, NoLostWakeUp) {
    const int64_t rounds = scaled(100000);
    const auto t0 = Clock::now();
    WakeRounds r = run_wake_rounds(rounds, 1);
    EXPECT_EQ(r.rounds, rounds);
    EXPECT_EQ(r.slow, 0) << "rounds where the wake-up was lost";
    // A wait() that returns false without a time-out also fails here: the
    // FUTEX_WAKE of round i's unpark() can arrive after the owner has seen
    // the flag, returned and parked again for round i + 1.
    EXPECT_EQ(r.woken, r.rounds) << "wait() timed out or returned spuriously";
    EXPECT_EQ(r.unparked, r.rounds) << "one successful unpark() per round";
    RecordProperty("seconds", std::to_string(seconds_since(t0)));
}

TEST(Parker, ConcurrentUnparkersWakeOncePerRound) {
    // Three wakers race for every round: exactly one unpark() per prepare()
    // may return true, and the owner must still never sleep through it.
    const int64_t rounds = scaled(20000);
    WakeRounds r = run_wake_rounds(rounds, 3);
    EXPECT_EQ(r.rounds, rounds);
    EXPECT_EQ(r.slow, 0) << "rounds where the wake-up was lost";
    EXPECT_EQ(r.woken, r.rounds);
    EXPECT_EQ(r.unparked, r.rounds)
            << "more (or fewer) than one unpark() per round returned true";
}
