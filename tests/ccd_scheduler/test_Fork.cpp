// fork(): a child that uses the pools, runtimes and monitors its parent had
// gets working workers (the parent's are not copied) and exits cleanly.

#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/ccd_scheduler/TaskGroup.h>
#include <faiss/ccd_scheduler/WorkShare.h>

#include <gtest/gtest.h>

#include "fork_test_util.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace faiss {
namespace ccd {
namespace {

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

} // namespace
} // namespace ccd
} // namespace faiss
