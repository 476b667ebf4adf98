// fork(): a child that uses the pools, runtimes and monitors its parent had
// gets working workers (the parent's are not copied) and exits cleanly.

#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/HeldAcrossForks.h>
#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/ccd_scheduler/TaskGroup.h>
#include <faiss/ccd_scheduler/WorkShare.h>

#include <gtest/gtest.h>

#include "fork_test_util.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace faiss {
namespace ccd {
namespace {

using fork_test::kUnderAsan;
using fork_test::kUnderTsan;
using fork_test::run_in_child;

struct CountUnits : RunnerFactory {
    mutable std::atomic<int64_t> ran{0};
    struct Runner : UnitRunner {
        const CountUnits& f;
        explicit Runner(const CountUnits& c) : f(c) {}
        void run(int64_t) override {
            f.ran.fetch_add(1);
        }
    };
    std::unique_ptr<UnitRunner> make_runner() const override {
        return std::unique_ptr<UnitRunner>(new Runner(*this));
    }
};

/// exercise: tasks, a group, a share with helpers; 0 when all ran once.
int exercise(Pool& pool) {
    std::atomic<int> ran{0};
    for (int i = 0; i < 200; i++) {
        pool.submit(make_mapping_id(1, uint32_t(i)), [&ran] {
            ran++;
        });
    }
    pool.wait_idle();
    TaskGroup group(pool);
    for (int i = 0; i < 200; i++) {
        group.submit(make_mapping_id(2, uint32_t(i)), [&ran] {
            ran++;
        });
    }
    group.wait();
    CountUnits units;
    ShareGroup g;
    g.id = make_mapping_id(3, 0);
    g.end = 1000;
    g.helpers = 2;
    run_shared(pool, {g}, 0, units);
    pool.wait_idle();
    return ran.load() == 400 && units.ran.load() == 1000 ? 0 : 1;
}

TEST(Fork, ChildGetsWorkingPools) {
    if (kUnderTsan) {
        GTEST_SKIP() << "ThreadSanitizer does not support threads started "
                        "after a multi-threaded fork";
    }
    Pool pool(Topology::from_spec("1x2"), PolicyKind::ccd);
    auto runtime = Runtime::create(
            RuntimeOptions().set_topology("2x1").set_monitor(true, 0.01));
    ASSERT_EQ(exercise(pool), 0);
    ASSERT_EQ(exercise(runtime->pool()), 0);
    // Twice: a child of a child too.
    const int status = run_in_child([&] {
        if (exercise(pool) != 0 || exercise(runtime->pool()) != 0) {
            return 1;
        }
        const int grandchild = run_in_child([&] {
            return exercise(pool) == 0 && exercise(runtime->pool()) == 0 ? 0
                                                                         : 1;
        });
        return grandchild;
    });
    EXPECT_EQ(status, 0) << "-1: the child hung";
    // The child's runtime and pool are destroyed at its exit (the lambdas'
    // captures are the parent's objects, copied): destroy copies there too.
    const int destroyed = run_in_child([&] {
        runtime.reset(); // the monitor's thread is the parent's: not joined
        pool.~Pool();    // drains and joins the child's own workers
        return 0;
    });
    EXPECT_EQ(destroyed, 0);
    // The parent's own are untouched.
    EXPECT_EQ(exercise(pool), 0);
    EXPECT_EQ(exercise(runtime->pool()), 0);
}

/// HeldAtFork: a thread holds `m` for `hold` and marks `released` just
/// before it unlocks; the test forks while it holds it.
struct HeldAtFork {
    std::atomic<bool> holding{false};
    std::atomic<bool> released{false};
    std::thread holder;
    HeldAtFork(std::mutex& m, std::chrono::milliseconds hold)
            : holder([this, &m, hold] {
                  std::lock_guard<std::mutex> lock(m);
                  holding = true;
                  std::this_thread::sleep_for(hold);
                  released = true;
              }) {
        while (!holding) {
            std::this_thread::yield();
        }
    }
    ~HeldAtFork() {
        holder.join();
    }
};

// The interleaving HeldAcrossForks.h argues about: another thread holds
// the mutex when fork() is called. Registered, fork() waits for it to be
// released and the child can lock it; not registered, the child finds it
// held by a thread it does not have and waits forever.
TEST(Fork, MutexHeldAcrossForksIsFreeInTheChild) {
    if (kUnderTsan) {
        GTEST_SKIP() << "ThreadSanitizer does not support fork() with "
                        "threads running";
    }
    static std::mutex registered; // process lifetime, as the contract says
    static const bool once = (hold_across_forks(registered), true);
    (void)once;
    {
        HeldAtFork held(registered, std::chrono::milliseconds(200));
        const int status = run_in_child([] {
            registered.lock();
            registered.unlock();
            return 0;
        });
        EXPECT_EQ(status, 0) << "-1: the child waited for the mutex";
        // fork() itself waited for the holder, in the parent too.
        EXPECT_TRUE(held.released.load());
    }
    std::mutex unregistered;
    {
        HeldAtFork held(unregistered, std::chrono::milliseconds(1500));
        const int status = run_in_child(
                [&unregistered] {
                    unregistered.lock();
                    return 0;
                },
                /*timeout_s=*/1,
                /*dump=*/false);
        EXPECT_EQ(status, -1) << "the hazard this guards against is gone?";
    }
}

TEST(Fork, HoldAcrossForksRefusesMoreThanItsSlots) {
    if (kUnderTsan) {
        GTEST_SKIP() << "ThreadSanitizer does not support fork() with "
                        "threads running";
    }
    // In a child: the slots it fills are the child's alone.
    const int status = run_in_child([] {
        static std::mutex many[kMaxHeldAcrossForks + 1];
        for (std::mutex& m : many) {
            try {
                hold_across_forks(m);
            } catch (const std::logic_error&) {
                return 0;
            }
        }
        return 1;
    });
    EXPECT_EQ(status, 0) << "1: no slot limit";
}

// A Monitor made before a fork() records nothing in the child: its thread
// is not there to drain the buffers.
TEST(Fork, MonitorRecordsNothingInAChild) {
    if (kUnderTsan || kUnderAsan) {
        GTEST_SKIP() << "fork() with threads running under a sanitizer "
                        "(fork_test_util.h)";
    }
    Pool pool(Topology::from_spec("2x1"));
    auto clock = std::make_shared<ManualClock>(0);
    Monitor monitor(pool, MonitorConfig(), clock);
    monitor.record(make_mapping_id(1, 0), 1, 100);
    monitor.tick();
    ASSERT_EQ(monitor.stats().records, 1u);
    const int status = run_in_child([&] {
        for (int i = 0; i < 1000; i++) {
            monitor.record(make_mapping_id(1, uint32_t(i)), 1, 100);
        }
        monitor.tick();
        return monitor.stats().records == 1 ? 0 : 1;
    });
    EXPECT_EQ(status, 0) << "1: the child's records were kept";
    monitor.record(make_mapping_id(1, 1), 1, 100);
    monitor.tick();
    EXPECT_EQ(monitor.stats().records, 2u) << "the parent still records";
}

/// InsideScopes: `n` threads each inside a CallerScope of `pool` until
/// release(); `inside` counts those that got in.
struct InsideScopes {
    std::atomic<int> inside{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    InsideScopes(const Pool& pool, int n) {
        for (int i = 0; i < n; i++) {
            threads.emplace_back([this, &pool] {
                Pool::CallerScope scope(pool);
                inside++;
                while (!go) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
            });
        }
    }
    /// settle: wait until `n` are inside, or `ms` went by; the count.
    int settle(int n, int ms) {
        for (int i = 0; i < ms && inside < n; i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return inside;
    }
    ~InsideScopes() {
        go = true;
        for (std::thread& t : threads) {
            t.join();
        }
    }
};

PoolOptions fifo() {
    PoolOptions o;
    o.fifo_callers = true;
    return o;
}

// Issue 28, 1: with fifo_callers, fork() while every slot of the caller
// gate is held by a searching thread. The child has none of those threads;
// its first caller must get in (the gate it enters is the child's), and so
// must as many as the child's gate has slots, and no more.
TEST(Fork, FifoCallersInAChild) {
    if (kUnderTsan) {
        GTEST_SKIP() << "ThreadSanitizer does not support threads started "
                        "after a multi-threaded fork";
    }
    Pool pool(Topology::from_spec("1x2"), PolicyKind::ccd, fifo());
    const int slots = pool.num_workers() + 1;
    InsideScopes parent(pool, slots);
    ASSERT_EQ(parent.settle(slots, 10000), slots);
    const int status = run_in_child(
            [&] {
                {
                    Pool::CallerScope first(pool); // hung here before
                }
                InsideScopes child(pool, slots + 1);
                const int in = child.settle(slots + 1, 300);
                if (in != slots) {
                    return 10 + in;
                }
                return exercise(pool);
            },
            30);
    EXPECT_EQ(status, 0) << "-1: the child hung; 10 + n: n callers inside";
}

/// others_now: active callers besides a new scope's own (0 when none is
/// open; a miscount shows as another number).
int others_now(const Pool& pool) {
    Pool::CallerScope probe(pool);
    return probe.others();
}

/// others_now_elsewhere: others_now, from a thread of its own.
int others_now_elsewhere(const Pool& pool) {
    int others = -1;
    std::thread([&] {
        others = others_now(pool);
    }).join();
    return others;
}

// A scope that fork() carries into the child (the forking thread's own)
// leaves the gate it entered (leaving the child's new gate would let one
// caller too many in) and is not uncounted from the child's count, which
// started at zero without it.
TEST(Fork, ScopeOpenAtForkLeavesItsOwnGate) {
    if (kUnderTsan) {
        GTEST_SKIP() << "ThreadSanitizer does not support threads started "
                        "after a multi-threaded fork";
    }
    Pool pool(Topology::from_spec("1x2"), PolicyKind::ccd, fifo());
    const int slots = pool.num_workers() + 1;
    ASSERT_EQ(exercise(pool), 0);
    auto open = std::make_unique<Pool::CallerScope>(pool);
    const int status = run_in_child(
            [&] {
                exercise(pool); // revives the pool: the child's own gate
                open.reset();   // its parent-side slot, not the child's
                if (others_now(pool) != 0) {
                    return 30;
                }
                InsideScopes child(pool, slots + 1);
                const int in = child.settle(slots + 1, 300);
                return in == slots ? 0 : 10 + in;
            },
            30);
    EXPECT_EQ(status, 0) << "-1: the child hung; 10 + n: n callers inside; "
                            "30: the child's caller count went wrong";
    // Seen from another thread (this one's own scopes nest in `open`).
    EXPECT_EQ(others_now_elsewhere(pool), 1) << "the parent's open scope";
    open.reset();
    EXPECT_EQ(others_now_elsewhere(pool), 0);
    EXPECT_EQ(exercise(pool), 0);
}

} // namespace
} // namespace ccd
} // namespace faiss
