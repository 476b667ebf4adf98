// TaskGroup: fork-join, exceptions, nested groups on workers, reuse.

#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/TaskGroup.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "stress_scale.h"

using namespace faiss::ccd;

namespace {

class TaskGroupOn : public ::testing::TestWithParam<std::string> {};

TEST_P(TaskGroupOn, WaitsForEveryTask) {
    Pool pool(Topology::from_spec(GetParam()));
    TaskGroup group(pool);
    const int n = int(scaled(100000));
    std::vector<std::atomic<int>> hits(n);
    for (int i = 0; i < n; i++) {
        group.submit(make_mapping_id(2, uint32_t(i % 97)), [&hits, i] {
            hits[i].fetch_add(1, std::memory_order_relaxed);
        });
    }
    group.wait();
    // wait() returned: every task's effect is visible, each exactly once.
    int bad = 0;
    for (auto& h : hits) {
        bad += h.load(std::memory_order_relaxed) != 1;
    }
    EXPECT_EQ(bad, 0);
}

TEST_P(TaskGroupOn, EmptyGroupReturnsAtOnce) {
    Pool pool(Topology::from_spec(GetParam()));
    TaskGroup group(pool);
    group.wait();
    group.wait();
}

// The first exception is rethrown after the group drains; tasks that had
// not started are skipped; the group and the pool stay usable.
//
// The throwing task is submitted first, so it heads its worker's queue and
// runs before that worker takes anything else; the others hold on until it
// has thrown. Otherwise, on 96 workers sharing 2 cores, the thrower's worker
// may get no CPU until every other task has run (CI saw 1999 of 1999
// finish). The wait is bounded, so a pool that never ran the thrower fails
// the test instead of hanging it.
TEST_P(TaskGroupOn, RethrowsFirstExceptionAfterDrain) {
    Pool pool(Topology::from_spec(GetParam()));
    std::atomic<int> running{0};
    std::atomic<int> finished{0};
    std::atomic<int> still_running_at_rethrow{-1};
    TaskGroup group(pool);
    const int n = 2000;
    group.submit(make_mapping_id(1, 0), [&] {
        throw std::runtime_error("list 0 is corrupt");
    });
    // Every other task holds its worker until the group has recorded the
    // failure (not merely until the throw: on an oversubscribed topology
    // the thrower can be descheduled while it unwinds, and the others
    // would all finish first). So at most one task per other worker runs;
    // the rest are skipped, whatever the scheduling.
    for (int i = 1; i < n; i++) {
        group.submit(make_mapping_id(1, uint32_t(i)), [&] {
            running.fetch_add(1);
            const auto deadline =
                    std::chrono::steady_clock::now() + std::chrono::seconds(30);
            while (!group.failed() &&
                   std::chrono::steady_clock::now() < deadline) {
                std::this_thread::yield();
            }
            std::this_thread::sleep_for(std::chrono::microseconds(5));
            running.fetch_sub(1);
            finished.fetch_add(1);
        });
    }
    try {
        group.wait();
        ADD_FAILURE() << "wait() did not rethrow";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "list 0 is corrupt");
        still_running_at_rethrow.store(running.load());
    }
    EXPECT_EQ(still_running_at_rethrow.load(), 0) << "rethrown before drain";
    EXPECT_LT(finished.load(), pool.num_workers());
    EXPECT_FALSE(group.failed());

    // Same group, same pool: works again, and reports no stale error.
    std::atomic<int> again{0};
    for (int i = 0; i < 100; i++) {
        group.submit(kLocalMappingId, [&] {
            again.fetch_add(1);
        });
    }
    EXPECT_NO_THROW(group.wait());
    EXPECT_EQ(again.load(), 100);
}

TEST_P(TaskGroupOn, OnlyTheFirstOfManyExceptions) {
    Pool pool(Topology::from_spec(GetParam()));
    TaskGroup group(pool);
    for (int i = 0; i < 100; i++) {
        group.submit(kLocalMappingId, [i] {
            throw std::runtime_error("task " + std::to_string(i));
        });
    }
    int caught = 0;
    try {
        group.wait();
    } catch (const std::runtime_error& e) {
        caught++;
        EXPECT_EQ(std::string(e.what()).rfind("task ", 0), 0u);
    }
    EXPECT_EQ(caught, 1);
    EXPECT_NO_THROW(group.wait());
}

/// tree: a recursive fork-join of `depth` levels, `fanout` children a node,
/// each level waiting on its own group from inside a worker. Returns the
/// number of nodes it ran (counted by the leaves and inner nodes).
int64_t tree(Pool& pool, int depth, int fanout, std::atomic<int64_t>& nodes) {
    nodes.fetch_add(1, std::memory_order_relaxed);
    if (depth == 0) {
        return 1;
    }
    std::vector<int64_t> sub(fanout, 0);
    TaskGroup group(pool);
    for (int c = 0; c < fanout; c++) {
        group.submit(kLocalMappingId, [&, c] {
            sub[c] = tree(pool, depth - 1, fanout, nodes);
        });
    }
    group.wait();
    int64_t total = 1;
    for (int64_t s : sub) {
        total += s;
    }
    return total;
}

// Nested groups on workers never deadlock, even with one worker, because a
// waiting worker runs tasks meanwhile.
TEST_P(TaskGroupOn, NestedGroupsDoNotDeadlock) {
    Pool pool(Topology::from_spec(GetParam()));
    std::atomic<int64_t> nodes{0};
    int64_t counted = 0;
    TaskGroup root(pool);
    root.submit(kLocalMappingId, [&] {
        counted = tree(pool, 7, 4, nodes);
    });
    root.wait();
    const int64_t expected = 21845; // sum of 4^i for i = 0..7
    EXPECT_EQ(counted, expected);
    EXPECT_EQ(nodes.load(), expected);
}

// An exception deep in a nested group reaches the outermost waiter.
TEST_P(TaskGroupOn, NestedExceptionPropagates) {
    Pool pool(Topology::from_spec(GetParam()));
    TaskGroup outer(pool);
    outer.submit(kLocalMappingId, [&] {
        TaskGroup inner(pool);
        inner.submit(kLocalMappingId, [] {
            throw std::invalid_argument("deep");
        });
        inner.wait(); // rethrows inside the outer task
    });
    EXPECT_THROW(outer.wait(), std::invalid_argument);
}

// The destructor waits: captured references stay valid until it returns.
TEST_P(TaskGroupOn, DestructorWaits) {
    Pool pool(Topology::from_spec(GetParam()));
    std::atomic<int> ran{0};
    {
        TaskGroup group(pool);
        for (int i = 0; i < 1000; i++) {
            group.submit(kLocalMappingId, [&ran] {
                std::this_thread::yield();
                ran.fetch_add(1);
            });
        }
    }
    EXPECT_EQ(ran.load(), 1000);
}

// Many outside threads, each with its own group, on one pool.
TEST_P(TaskGroupOn, ConcurrentGroupsFromManyThreads) {
    Pool pool(Topology::from_spec(GetParam()));
    const int kThreads = 8;
    const int rounds = int(scaled(2000));
    std::atomic<int64_t> total{0};
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&, t] {
            for (int r = 0; r < rounds; r++) {
                std::atomic<int> mine{0};
                TaskGroup group(pool);
                for (int i = 0; i < 8; i++) {
                    group.submit(
                            make_mapping_id(uint32_t(t), uint32_t(i)),
                            [&mine] {
                                mine.fetch_add(1);
                            });
                }
                group.wait();
                wrong.fetch_add(mine.load() != 8);
                total.fetch_add(mine.load());
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(total.load(), int64_t(kThreads) * rounds * 8);
}

/// CopyThrows: a callable whose copy throws once `armed` (the submit path
/// copies a const callable into the task node).
struct CopyThrows {
    std::atomic<int>* ran;
    bool armed;
    CopyThrows(std::atomic<int>* r, bool a) : ran(r), armed(a) {}
    CopyThrows(const CopyThrows& o) : ran(o.ran), armed(o.armed) {
        if (armed) {
            throw std::runtime_error("no copy for you");
        }
    }
    void operator()() const {
        ran->fetch_add(1);
    }
};

// A submission that fails (here the callable's copy throws) throws from
// submit(), is not counted, and leaves the group and the pool working:
// wait() returns once the other tasks are done, instead of never.
TEST_P(TaskGroupOn, FailedSubmitIsNotCounted) {
    Pool pool(Topology::from_spec(GetParam()));
    std::atomic<int> ran{0};
    TaskGroup group(pool);
    for (int i = 0; i < 100; i++) {
        const CopyThrows task(&ran, i % 10 == 3);
        if (i % 10 == 3) {
            EXPECT_THROW(
                    group.submit(kLocalMappingId, task),
                    std::runtime_error);
        } else {
            group.submit(kLocalMappingId, task);
        }
    }
    EXPECT_NO_THROW(group.wait());
    EXPECT_EQ(ran.load(), 90);
    // A worker counts its task after the group's count-down (wait() may
    // return first), so compare once the pool is idle: a failed submit left
    // nothing queued, and the fresh pool ran exactly the 90 good tasks.
    pool.wait_idle();
    EXPECT_EQ(pool.stats().tasks_run(), 90u);
}

INSTANTIATE_TEST_SUITE_P(
        Topologies,
        TaskGroupOn,
        ::testing::Values("1x1", "2x1", "4x2", "12x8"),
        [](const auto& info) {
            std::string name = info.param;
            for (char& c : name) {
                if (c == 'x') {
                    c = '_';
                }
            }
            return name;
        });

} // namespace
