// Pool: exactly-once execution across emulated topologies and policies,
// steal order, placement, destruction with pending work, no lost wake-up.

#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/TaskGroup.h>

#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "spin_until.h"
#include "stress_scale.h"

using namespace faiss::ccd;

namespace {

/// Gate: a one-shot latch a test opens to release blocked tasks.
struct Gate {
    std::atomic<bool> open{false};
    void wait() const {
        while (!open.load(std::memory_order_acquire)) {
            std::this_thread::yield();
        }
    }
};

/// first_id_on_ccd: some MappingId the pool places on CCD `ccd`.
MappingId first_id_on_ccd(const Pool& pool, int ccd, uint32_t start = 0) {
    for (uint32_t l = start;; l++) {
        MappingId id = make_mapping_id(7, l);
        if (pool.pick_ccd(id) == ccd) {
            return id;
        }
    }
}

/// Counts: one slot per task, checked for exactly-once at the end.
struct Counts {
    explicit Counts(size_t n) : slots(n) {} // value-initialised: zeros
    void hit(size_t i) {
        slots[i].fetch_add(1, std::memory_order_relaxed);
    }
    /// bad: how many of the first n slots were not hit exactly once.
    size_t bad(size_t n) const {
        size_t count = 0;
        for (size_t i = 0; i < n; i++) {
            count += slots[i].load(std::memory_order_relaxed) != 1;
        }
        return count;
    }
    std::vector<std::atomic<uint8_t>> slots;
};

using TopologyAndPolicy = std::tuple<std::string, PolicyKind>;

class PoolExactlyOnce : public ::testing::TestWithParam<TopologyAndPolicy> {};

// Four outside submitters push tasks with random ids; every tenth task
// submits two children from inside the pool (the local-deque path).
// Every task, parent or child, must run exactly once.
TEST_P(PoolExactlyOnce, EveryTaskRunsOnce) {
    const std::string spec = std::get<0>(GetParam());
    const PolicyKind policy = std::get<1>(GetParam());
    const int64_t total =
            policy == PolicyKind::ccd ? scaled(1000000) : scaled(200000);
    const int kSubmitters = 4;
    const int64_t parents = total / 12 * 10 / kSubmitters * kSubmitters;
    const int64_t slots = parents + parents / 10 * 2 + 2;
    Counts counts(size_t(slots) + 64);
    std::atomic<int64_t> next_child{parents};
    PoolOptions options;
    options.ring_capacity = 64; // small rings: exercise the overflow path
    options.deque_capacity = 64;
    {
        Pool pool(Topology::from_spec(spec), policy, options);
        std::vector<std::thread> submitters;
        for (int s = 0; s < kSubmitters; s++) {
            submitters.emplace_back([&, s] {
                std::mt19937_64 rng(s);
                for (int64_t i = s; i < parents; i += kSubmitters) {
                    MappingId id = make_mapping_id(
                            uint32_t(rng() % 15),
                            uint32_t(rng() % 1024));
                    pool.submit(id, [&, i] {
                        counts.hit(size_t(i));
                        if (i % 10 == 0) {
                            for (int c = 0; c < 2; c++) {
                                int64_t child = next_child.fetch_add(1);
                                pool.submit(
                                        c ? kLocalMappingId
                                          : make_mapping_id(3, uint32_t(i)),
                                        [&counts, child] {
                                            counts.hit(size_t(child));
                                        });
                            }
                        }
                    });
                }
            });
        }
        for (std::thread& t : submitters) {
            t.join();
        }
        pool.wait_idle();
        const int64_t ran = next_child.load();
        PoolStats stats = pool.stats();
        EXPECT_EQ(stats.tasks_run(), uint64_t(ran));
        EXPECT_EQ(
                stats.local_pops() + stats.intra_ccd_steals() +
                        stats.cross_ccd_steals(),
                uint64_t(ran));
        if (policy == PolicyKind::round_robin) {
            EXPECT_EQ(stats.intra_ccd_steals() + stats.cross_ccd_steals(), 0u);
        }
        EXPECT_EQ(counts.bad(size_t(ran)), 0u) << "tasks not run exactly once";
    }
}

INSTANTIATE_TEST_SUITE_P(
        Topologies,
        PoolExactlyOnce,
        ::testing::Combine(
                ::testing::Values("1x1", "2x1", "4x2", "12x8"),
                ::testing::Values(
                        PolicyKind::ccd,
                        PolicyKind::flat_steal,
                        PolicyKind::round_robin)),
        [](const auto& info) {
            std::string name = std::get<0>(info.param) + "_" +
                    policy_name(std::get<1>(info.param));
            for (char& c : name) {
                if (c == 'x') {
                    c = '_';
                }
            }
            return name;
        });

// The ccd policy honours the placement: with cross-CCD stealing disabled
// (a threshold no backlog reaches), every task runs on its id's CCD.
TEST(PoolPlacement, TasksRunOnTheirCcd) {
    PoolOptions options;
    options.steal.cross_ccd_threshold = int64_t(1) << 40;
    Pool pool(Topology::from_spec("4x2"), PolicyKind::ccd, options);
    const int n = int(scaled(20000));
    std::atomic<int> wrong{0};
    std::atomic<int> ran{0};
    for (int i = 0; i < n; i++) {
        MappingId id = make_mapping_id(uint32_t(i % 5), uint32_t(i));
        const int ccd = pool.pick_ccd(id);
        ASSERT_GE(ccd, 0);
        ASSERT_LT(ccd, 4);
        ASSERT_EQ(ccd, pool.pick_ccd(id)); // stable
        pool.submit(id, [&, ccd] {
            int w = pool.current_worker();
            if (w < 0 || pool.topology().ccd_of(w) != ccd) {
                wrong.fetch_add(1);
            }
            ran.fetch_add(1);
        });
    }
    pool.wait_idle();
    EXPECT_EQ(ran.load(), n);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(pool.stats().cross_ccd_steals(), 0u);
    EXPECT_EQ(pool.current_worker(), -1);
    EXPECT_EQ(pool.pick_ccd(kLocalMappingId), -1);
}

// A submitter outside the pool never queues on the worker pinned to its
// own CPU (that worker could start only by taking the CPU from it). The
// test thread pins itself to worker 0's CPU of a 1x2 pool; worker 0 may
// still steal, but never pops from its own queue: every task it ran, it
// stole from worker 1. (Which of the two runs how many depends on the
// machine's load: on a busy CPU 1, worker 0 may steal all of them.)
TEST(PoolPlacement, NotOnTheSubmittersCpu) {
    Pool pool(Topology::from_spec("1x2"));
    const int cpu = pool.topology().cpu_of(0);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu >= 0 ? cpu : 0, &set);
    if (cpu < 0 ||
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
        GTEST_SKIP() << "cannot pin to worker 0's CPU";
    }
    std::atomic<int> ran{0};
    for (int i = 0; i < 2000; i++) {
        pool.submit(make_mapping_id(1, uint32_t(i)), [&] {
            ran.fetch_add(1);
        });
    }
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 2000);
    const PoolStats st = pool.stats();
    EXPECT_EQ(st.workers[0].local_pops, 0u);
    EXPECT_EQ(st.workers[0].tasks_run, st.workers[0].intra_ccd_steals);
    EXPECT_EQ(st.workers[0].tasks_run + st.workers[1].tasks_run, 2000u);
    // Unpin: other tests of this process may run on this thread.
    CPU_ZERO(&set);
    for (int c = 0;
         c < CPU_SETSIZE && c < int(std::thread::hardware_concurrency());
         c++) {
        CPU_SET(c, &set);
    }
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// Steal order on 2x2 (workers 0,1 on CCD 0; 2,3 on CCD 1). Workers 0, 1
// and 3 are blocked; worker 3 queued S tasks in its own deque before
// blocking; then R tasks are queued on CCD 0. Worker 2 is released: it must
// take every S (its sibling's) before any R (a remote CCD's).
//
// Worker 3 queues the S tasks only once every worker sits in its blocker:
// queued earlier, worker 2 could steal them before taking its own blocker,
// outside the measured window (CI saw that once).
TEST(PoolStealOrder, SiblingBeforeRemoteCcd) {
    // Threshold 1: worker 2 takes CCD 0's last R task too (the default,
    // CCD 0's two workers, leaves it home; ThresholdKeepsWorkHome).
    PoolOptions options;
    options.steal.cross_ccd_threshold = 1;
    Pool pool(Topology::from_spec("2x2"), PolicyKind::ccd, options);
    const int kS = 200, kR = 200;
    Gate gates[4];
    std::atomic<int> started{0};
    std::atomic<bool> s_queued{false};
    std::atomic<int> s_left{kS};
    std::atomic<int> r_before_s_done{0};
    std::atomic<int> s_not_on_2{0};
    std::atomic<int> r_ran{0};
    std::atomic<bool> seen[4] = {};
    for (int b = 0; b < 4; b++) {
        pool.submit(kLocalMappingId, [&] {
            const int w = pool.current_worker();
            // Each worker blocks in exactly one blocker: a second one
            // could only start after the first returns.
            ASSERT_FALSE(seen[w].exchange(true));
            started.fetch_add(1);
            if (w == 3) {
                while (started.load() != 4) {
                    std::this_thread::yield();
                }
                for (int i = 0; i < kS; i++) {
                    pool.submit(kLocalMappingId, [&] {
                        if (pool.current_worker() != 2) {
                            s_not_on_2.fetch_add(1);
                        }
                        s_left.fetch_sub(1);
                    });
                }
                s_queued.store(true);
            }
            gates[w].wait();
        });
    }
    ASSERT_TRUE(spin_until([&] {
        return s_queued.load();
    }));
    const MappingId r_id = first_id_on_ccd(pool, 0);
    for (int i = 0; i < kR; i++) {
        pool.submit(r_id, [&] {
            if (s_left.load() != 0) {
                r_before_s_done.fetch_add(1);
            }
            r_ran.fetch_add(1);
        });
    }
    const PoolStats before = pool.stats();
    gates[2].open.store(true);
    ASSERT_TRUE(spin_until([&] {
        return r_ran.load() == kR;
    }));
    const PoolStats delta = pool.stats().since(before);
    for (Gate& g : gates) {
        g.open.store(true);
    }
    pool.wait_idle();
    EXPECT_EQ(s_left.load(), 0);
    EXPECT_EQ(s_not_on_2.load(), 0);
    EXPECT_EQ(r_before_s_done.load(), 0)
            << "a remote CCD was robbed while a sibling had work";
    EXPECT_EQ(delta.workers[2].intra_ccd_steals, uint64_t(kS));
    EXPECT_EQ(delta.workers[2].cross_ccd_steals, uint64_t(kR));
}

// Below the threshold a remote CCD is never robbed, however idle we are.
TEST(PoolStealOrder, ThresholdKeepsWorkHome) {
    PoolOptions options;
    options.steal.cross_ccd_threshold = 1000;
    Pool pool(Topology::from_spec("2x1"), PolicyKind::ccd, options);
    Gate gate;
    std::atomic<bool> blocked{false};
    const MappingId home0 = first_id_on_ccd(pool, 0);
    pool.submit(home0, [&] {
        blocked.store(true);
        gate.wait();
    });
    ASSERT_TRUE(spin_until([&] {
        return blocked.load();
    }));
    std::atomic<int> on_ccd1{0};
    for (int i = 0; i < 100; i++) {
        pool.submit(home0, [&] {
            on_ccd1.fetch_add(pool.topology().ccd_of(pool.current_worker()));
        });
    }
    // Worker 1 is idle all along; give it ample time to misbehave.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.open.store(true);
    pool.wait_idle();
    EXPECT_EQ(on_ccd1.load(), 0);
    EXPECT_EQ(pool.stats().cross_ccd_steals(), 0u);
}

// RoundRobin never steals: a task queued behind a blocked worker waits for
// it even though the other worker is idle.
TEST(PoolPolicy, RoundRobinNeverSteals) {
    Pool pool(Topology::from_spec("2x1"), PolicyKind::round_robin);
    Gate gate;
    std::atomic<int> blocked_on{-1};
    pool.submit(kLocalMappingId, [&] {
        blocked_on.store(pool.current_worker());
        gate.wait();
    });
    ASSERT_TRUE(spin_until([&] {
        return blocked_on.load() >= 0;
    }));
    std::atomic<int> ran_elsewhere{0};
    for (int i = 0; i < 1000; i++) {
        pool.submit(make_mapping_id(1, uint32_t(i)), [&] {
            ran_elsewhere.fetch_add(pool.current_worker() != blocked_on.load());
        });
    }
    // Half the tasks went to the blocked worker's ring and must still wait.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(pool.stats().tasks_run(), 500u);
    gate.open.store(true);
    pool.wait_idle();
    EXPECT_EQ(ran_elsewhere.load(), 500);
    EXPECT_EQ(
            pool.stats().intra_ccd_steals() + pool.stats().cross_ccd_steals(),
            0u);
}

// ~Pool runs every pending task, including tasks submitted by pending
// tasks, before it joins.
TEST(PoolDestruction, RunsPendingTasks) {
    for (const char* spec : {"1x1", "2x1", "4x2"}) {
        std::atomic<int64_t> ran{0};
        const int n = int(scaled(50000));
        {
            Pool pool(Topology::from_spec(spec));
            for (int i = 0; i < n; i++) {
                pool.submit(make_mapping_id(0, uint32_t(i)), [&pool, &ran, i] {
                    ran.fetch_add(1);
                    if (i % 100 == 0) {
                        pool.submit(kLocalMappingId, [&ran] {
                            std::this_thread::sleep_for(
                                    std::chrono::microseconds(20));
                            ran.fetch_add(1);
                        });
                    }
                });
            }
        } // destroyed with work still queued
        EXPECT_EQ(ran.load(), n + (n + 99) / 100) << spec;
    }
}

TEST(PoolDestruction, IdlePoolJoinsAtOnce) {
    for (int i = 0; i < 50; i++) {
        Pool pool(Topology::from_spec("4x2"));
    }
}

// Ungrouped tasks that throw are counted and dropped; the pool goes on.
TEST(PoolExceptions, UngroupedThrowIsCounted) {
    Pool pool(Topology::from_spec("2x1"));
    std::atomic<int> after{0};
    for (int i = 0; i < 10; i++) {
        pool.submit(kLocalMappingId, [] {
            throw std::runtime_error("x");
        });
    }
    pool.wait_idle();
    pool.submit(kLocalMappingId, [&] {
        after.fetch_add(1);
    });
    pool.wait_idle();
    uint64_t uncaught = 0;
    for (const WorkerStats& w : pool.stats().workers) {
        uncaught += w.uncaught_exceptions;
    }
    EXPECT_EQ(uncaught, 10u);
    EXPECT_EQ(after.load(), 1);
}

TEST(PoolMisuse, WaitIdleFromWorkerThrows) {
    Pool pool(Topology::from_spec("1x1"));
    std::atomic<int> threw{0};
    pool.submit(kLocalMappingId, [&] {
        try {
            pool.wait_idle();
        } catch (const std::logic_error&) {
            threw.store(1);
        }
    });
    pool.wait_idle();
    EXPECT_EQ(threw.load(), 1);
}

// No lost wake-up: 10^5 rounds, each submitting to a pool whose only worker
// has just parked (even rounds: we saw it park; odd rounds: it is on its
// way to parking), each with a time-out. spin_rounds = 0 sends the worker
// straight to the parking protocol, the path under test.
TEST(PoolParking, NoLostWakeUp) {
    for (const char* spec : {"1x1", "2x1"}) {
        PoolOptions options;
        options.spin_rounds = 0;
        Pool pool(Topology::from_spec(spec), PolicyKind::ccd, options);
        const int64_t rounds = scaled(100000);
        std::atomic<int64_t> done{0};
        int64_t timeouts = 0;
        uint64_t parks_at_last_submit = 0;
        for (int64_t r = 0; r < rounds; r++) {
            if (r % 2 == 0) {
                // The worker that ran the previous task parks again after
                // it: wait until it has (bounded, in case a sibling's park
                // was counted instead).
                spin_until(
                        [&] {
                            return pool.stats().parks() > parks_at_last_submit;
                        },
                        0.01);
            }
            parks_at_last_submit = pool.stats().parks();
            pool.submit(make_mapping_id(1, uint32_t(r)), [&done] {
                done.fetch_add(1, std::memory_order_release);
            });
            if (!spin_until(
                        [&] {
                            return done.load(std::memory_order_acquire) ==
                                    r + 1;
                        },
                        5.0)) {
                timeouts++;
                break;
            }
        }
        EXPECT_EQ(timeouts, 0) << spec << ": a submitted task was stranded";
        EXPECT_GT(pool.stats().parks(), uint64_t(rounds / 4)) << spec;
    }
}

// Many outside threads submitting to one shared pool at once: nothing is
// lost and the pool never needs more threads than it has workers.
TEST(PoolClients, ManyClientsShareOnePool) {
    Pool pool(Topology::from_spec("2x2"));
    const int kClients = 8;
    const int per_client = int(scaled(20000));
    std::atomic<int64_t> ran{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; c++) {
        clients.emplace_back([&, c] {
            TaskGroup group(pool);
            for (int i = 0; i < per_client; i++) {
                group.submit(
                        make_mapping_id(uint32_t(c), uint32_t(i % 64)),
                        [&ran] {
                            ran.fetch_add(1);
                        });
            }
            group.wait();
        });
    }
    for (std::thread& t : clients) {
        t.join();
    }
    EXPECT_EQ(ran.load(), int64_t(kClients) * per_client);
}

/// Chain: a completion that, when its task is done, submits `left` more
/// tasks to the pool, each with itself as completion.
struct Chain final : TaskCompletion {
    Pool& pool;
    std::atomic<int> left;
    std::atomic<int> ran{0};
    Chain(Pool& p, int n) : pool(p), left(n) {}
    void task_threw(std::exception_ptr) noexcept override {}
    void task_done() noexcept override {
        if (left.fetch_sub(1) > 0) {
            // Give the pool time to look idle if it counted this task as
            // retired before this completion ran.
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            pool.submit(kLocalMappingId, this, [this] {
                ran.fetch_add(1);
            });
        }
    }
};

// wait_idle() (and so ~Pool, ~Runtime) waits for a task's completion too,
// and for the work the completion submits: a continuation never runs on a
// pool that has been declared idle.
TEST(PoolCompletion, WaitIdleWaitsForCompletionsAndWhatTheySubmit) {
    Pool pool(Topology::from_spec("2x1"));
    Chain chain(pool, 5);
    pool.submit(kLocalMappingId, &chain, [&chain] {
        chain.ran.fetch_add(1);
    });
    pool.wait_idle();
    EXPECT_EQ(chain.ran.load(), 6);
    EXPECT_EQ(chain.left.load(), -1);
}

} // namespace
