// WorkShare: every unit runs exactly once, the caller never waits for a
// helper to start, errors come back to the caller, shares nest.

#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/WorkShare.h>

#include "stress_scale.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

namespace faiss {
namespace ccd {
namespace {

/// Counting: each unit bumps its own slot; runners are counted.
struct Counting : RunnerFactory {
    std::vector<std::atomic<int>> runs;
    std::vector<std::atomic<int>> by_caller; // 1 when the caller ran it
    std::thread::id caller = std::this_thread::get_id();
    mutable std::atomic<int> made{0};
    mutable std::atomic<int> destroyed{0};
    int64_t throw_at = -1;

    explicit Counting(int64_t n) : runs(n), by_caller(n) {}

    struct Runner : UnitRunner {
        const Counting& f;
        explicit Runner(const Counting& f_in) : f(f_in) {}
        ~Runner() override {
            f.destroyed.fetch_add(1);
        }
        void run(int64_t unit) override {
            if (unit == f.throw_at) {
                throw std::runtime_error("unit failed");
            }
            const_cast<Counting&>(f).runs[unit].fetch_add(1);
            if (std::this_thread::get_id() == f.caller) {
                const_cast<Counting&>(f).by_caller[unit].store(1);
            }
        }
    };
    std::unique_ptr<UnitRunner> make_runner() const override {
        made.fetch_add(1);
        return std::unique_ptr<UnitRunner>(new Runner(*this));
    }
};

std::vector<ShareGroup>
groups_of(const Pool& pool, int64_t n, int ngroups, int helpers) {
    std::vector<ShareGroup> groups;
    for (int g = 0; g < ngroups; g++) {
        ShareGroup sg;
        sg.id = make_mapping_id(5, uint32_t(g));
        sg.begin = n * g / ngroups;
        sg.end = n * (g + 1) / ngroups;
        sg.helpers = helpers;
        groups.push_back(sg);
    }
    (void)pool;
    return groups;
}

TEST(WorkShare, EveryUnitOnceWithHelpers) {
    Pool pool(Topology::from_spec("2x2"), PolicyKind::ccd);
    for (int helpers : {0, 1, 2, 5}) {
        const int64_t n = 5000;
        Counting f(n);
        const ShareStats st =
                run_shared(pool, groups_of(pool, n, 3, helpers), 1, f);
        for (int64_t u = 0; u < n; u++) {
            ASSERT_EQ(f.runs[u].load(), 1) << "unit " << u;
        }
        EXPECT_EQ(st.units, n);
        // At most one helper per pool worker (4 here) is submitted.
        EXPECT_EQ(st.helpers_submitted, 3 * std::min(helpers, 4));
        EXPECT_LE(st.helpers_with_units, st.helpers_submitted);
        int64_t by_caller = 0;
        for (int64_t u = 0; u < n; u++) {
            by_caller += f.by_caller[u].load();
        }
        EXPECT_EQ(st.units_by_caller, by_caller);
        // One runner per participant that ran units, all gone by now.
        EXPECT_EQ(f.made.load(), st.helpers_with_units + (by_caller > 0));
        EXPECT_EQ(f.destroyed.load(), f.made.load());
        if (helpers == 0) {
            EXPECT_EQ(st.units_by_caller, n);
        }
    }
    pool.wait_idle();
}

TEST(WorkShare, NoMoreHelpersThanUnitsOrWorkers) {
    // A caller may ask for any number: a helper without a unit to take, or
    // beyond the pool's workers, is never submitted (2^30 would otherwise
    // cost 2^30 submits).
    Pool pool(Topology::from_spec("2x2"), PolicyKind::ccd);
    for (const auto& [units, helpers, submitted] :
         {std::tuple<int64_t, int, int>{2, 5, 2},
          {3, 1 << 30, 3},
          {5000, 1 << 30, 4},
          {0, 7, 0}}) {
        Counting f(std::max<int64_t>(units, 1));
        const ShareStats st =
                run_shared(pool, groups_of(pool, units, 1, helpers), 0, f);
        EXPECT_EQ(st.units, units);
        EXPECT_EQ(st.helpers_submitted, submitted) << units << " units";
        for (int64_t u = 0; u < units; u++) {
            ASSERT_EQ(f.runs[u].load(), 1) << "unit " << u;
        }
    }
}

TEST(WorkShare, EmptyShareRunsNothing) {
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd);
    Counting f(0);
    const ShareStats st = run_shared(pool, {}, 0, f);
    EXPECT_EQ(st.units, 0);
    EXPECT_EQ(f.made.load(), 0);
    std::vector<ShareGroup> bad(1);
    bad[0].begin = 3;
    bad[0].end = 1;
    EXPECT_THROW(run_shared(pool, bad, 0, f), std::invalid_argument);
}

// The only worker is held by a task; the share's helper cannot start. The
// caller runs every unit and returns; the helper starts after the caller's
// factory is gone and must touch none of it (ASan checks that).
TEST(WorkShare, NeverWaitsForAHelperToStart) {
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd);
    std::atomic<bool> release{false};
    std::atomic<bool> holding{false};
    pool.submit(kLocalMappingId, [&] {
        holding.store(true);
        while (!release.load()) {
            std::this_thread::yield();
        }
    });
    while (!holding.load()) {
        std::this_thread::yield();
    }
    {
        auto f = std::make_unique<Counting>(64);
        const ShareStats st =
                run_shared(pool, groups_of(pool, 64, 1, 1), 0, *f);
        EXPECT_EQ(st.units_by_caller, 64);
        EXPECT_EQ(st.helpers_submitted, 1);
        EXPECT_EQ(st.helpers_with_units, 0);
        for (int u = 0; u < 64; u++) {
            EXPECT_EQ(f->runs[u].load(), 1);
        }
    } // the factory dies before the helper runs
    release.store(true);
    pool.wait_idle();
}

TEST(WorkShare, FirstErrorComesBackAndEveryUnitIsAccounted) {
    Pool pool(Topology::from_spec("1x2"), PolicyKind::ccd);
    const int64_t n = 2000;
    Counting f(n);
    f.throw_at = 10;
    EXPECT_THROW(
            run_shared(pool, groups_of(pool, n, 1, 1), 0, f),
            std::runtime_error);
    for (int64_t u = 0; u < n; u++) {
        EXPECT_LE(f.runs[u].load(), 1);
    }
    EXPECT_EQ(f.destroyed.load(), f.made.load());
    // The pool and a new share still work.
    Counting g(100);
    run_shared(pool, groups_of(pool, 100, 1, 1), 0, g);
    for (int64_t u = 0; u < 100; u++) {
        EXPECT_EQ(g.runs[u].load(), 1);
    }
}

// A share started by a task of a one-worker pool: its helper can only run
// on the worker that waits; the caller does everything and returns.
TEST(WorkShare, NestedInATaskOfAOneWorkerPool) {
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd);
    std::atomic<int64_t> total{0};
    std::atomic<bool> done{false};
    pool.submit(kLocalMappingId, [&] {
        Counting f(300);
        run_shared(pool, groups_of(pool, 300, 2, 1), 0, f);
        int64_t sum = 0;
        for (int u = 0; u < 300; u++) {
            sum += f.runs[u].load();
        }
        total.store(sum);
        done.store(true);
    });
    pool.wait_idle();
    EXPECT_TRUE(done.load());
    EXPECT_EQ(total.load(), 300);
}

// Many callers at once, with helpers, on an oversubscribed pool: every
// unit of every share exactly once.
TEST(WorkShare, StressConcurrentCallers) {
    Pool pool(Topology::from_spec("2x2"), PolicyKind::ccd);
    const int callers = 4;
    const int rounds = int(scaled(300) / 10);
    std::atomic<int64_t> wrong{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < callers; c++) {
        threads.emplace_back([&, c] {
            for (int r = 0; r < rounds; r++) {
                const int64_t n = 1 + (r * 37 + c * 11) % 400;
                Counting f(n);
                Pool::CallerScope scope(pool);
                run_shared(pool, groups_of(pool, n, 1 + r % 3, r % 3), c, f);
                for (int64_t u = 0; u < n; u++) {
                    wrong += f.runs[u].load() != 1;
                }
                wrong += f.made.load() != f.destroyed.load();
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    EXPECT_EQ(wrong.load(), 0);
    pool.wait_idle();
}

TEST(PoolLoadSignals, HandoffAverageMovesTowardSamples) {
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd);
    const Pool::Wake parked = Pool::Wake::parked;
    // Aging only lowers the estimate (however slowly this runs).
    EXPECT_LE(pool.handoff_ns(parked), Pool::kInitialHandoffNs[1]);
    EXPECT_GT(pool.handoff_ns(parked), 0);
    // Samples noted outside the pool count as parked ones.
    for (int i = 0; i < 200; i++) {
        pool.note_handoff(1000);
    }
    EXPECT_LE(pool.handoff_ns(parked), 1000 + 1);
    EXPECT_GT(pool.handoff_ns(parked), 900); // within a ms of the sample
    // Without samples it ages: at least 1.5 half-lives later, under half.
    std::this_thread::sleep_for(
            std::chrono::nanoseconds(int64_t(1.5 * Pool::kHandoffHalfLifeNs)));
    EXPECT_LT(pool.handoff_ns(parked), 500);
}

// A dear hand-off after the estimate aged down restores it at once (one
// sample), while cheap ones bring it down only as an average.
TEST(PoolLoadSignals, HandoffRisesAtOnceFallsSlowly) {
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd);
    const Pool::Wake parked = Pool::Wake::parked;
    for (int i = 0; i < 200; i++) {
        pool.note_handoff(1000);
    }
    // Bounds leave a few ms of aging for a slow (sanitized, preempted)
    // run; as an average from 1000 it would read ~5900, then ~5300.
    pool.note_handoff(40000);
    EXPECT_GT(pool.handoff_ns(parked), 30000);
    pool.note_handoff(1000);
    EXPECT_GT(pool.handoff_ns(parked), 20000); // one cheap sample: 1/8
    EXPECT_LT(pool.handoff_ns(parked), 36000);
}

// A helper noted by a worker that was awake (it spun, not parked) goes to
// the spinning estimate, which handoff_ns() answers with while a worker
// spins; the parked estimate keeps its own samples.
TEST(PoolLoadSignals, SpinningAndParkedHandoffsApart) {
    PoolOptions options;
    options.yield_spin_us = 200000; // 200 ms awake after each task
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd, options);
    const Pool::Wake spinning = Pool::Wake::spinning;
    const Pool::Wake parked = Pool::Wake::parked;
    pool.note_handoff(50000); // the parked estimate, from outside
    // The worker starts spinning and stays awake: its samples are spinning.
    for (int i = 0; i < 50; i++) {
        std::promise<void> ran;
        pool.submit(kLocalMappingId, [&] {
            pool.note_handoff(300);
            ran.set_value();
        });
        ran.get_future().wait();
    }
    EXPECT_LT(pool.handoff_ns(spinning), 1000);
    EXPECT_GT(pool.handoff_ns(parked), 25000);
    // The worker spins once it has left its last task (poll: it may still
    // be inside it, and a parked estimate answers until then).
    bool spinning_answered = false;
    for (int i = 0; i < 1000 && !spinning_answered; i++) {
        spinning_answered = pool.handoff_ns() < 1000;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    EXPECT_TRUE(spinning_answered);
}

TEST(PoolLoadSignals, CallerCcdOfAWorkerIsItsCcd) {
    Pool pool(Topology::from_spec("2x1"), PolicyKind::ccd);
    std::atomic<int> seen{-2};
    std::atomic<int> worker{-1};
    pool.submit(make_mapping_id(1, 0), [&] {
        worker.store(pool.current_worker());
        seen.store(pool.caller_ccd());
    });
    pool.wait_idle();
    ASSERT_GE(worker.load(), 0);
    EXPECT_EQ(seen.load(), pool.topology().ccd_of(worker.load()));
}

} // namespace
} // namespace ccd
} // namespace faiss
