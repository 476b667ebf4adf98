// The pool decides as StealPolicy's pure functions say: the same inputs fed
// to a running pool and to the policy alone give the same dispatch targets
// (observed through the queued counts of blocked workers), and the
// pure steal round visits victims in the documented order on a fake world.

#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/StealPolicy.h>

#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "spin_until.h"

using namespace faiss::ccd;

namespace {

/// pin_self: pin the calling thread to `cpu`; false when that fails.
bool pin_self(int cpu) {
    if (cpu < 0) {
        return false;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

/// BlockedPool: a pool whose every worker sits in one blocker task until
/// release(), so that nothing queued afterwards is popped or stolen and
/// each worker's queued count shows where the dispatcher put a task.
struct BlockedPool {
    BlockedPool(const std::string& spec, PolicyKind kind, PoolOptions options)
            : pool(Topology::from_spec(spec), kind, options) {
        const int nw = pool.num_workers();
        for (int b = 0; b < nw; b++) {
            // Idle workers steal blockers queued twice on one worker (ccd,
            // flat); round_robin places consecutive ones on distinct
            // workers (its wake-up path uses no rotor). So each worker
            // ends up in exactly one.
            pool.submit(kLocalMappingId, [this] {
                started.fetch_add(1);
                while (!open.load(std::memory_order_acquire)) {
                    std::this_thread::yield();
                }
            });
        }
        ok = spin_until([&] {
            return started.load() == nw;
        });
    }
    ~BlockedPool() {
        release();
        pool.wait_idle();
    }
    void release() {
        open.store(true, std::memory_order_release);
    }
    std::vector<int64_t> queued() const {
        std::vector<int64_t> q;
        for (const WorkerStats& w : pool.stats().workers) {
            q.push_back(w.queued);
        }
        return q;
    }

    Pool pool;
    std::atomic<int> started{0};
    std::atomic<bool> open{false};
    bool ok = false;
};

/// check_dispatch: from a fresh thread (its rotor at its seed), submit n
/// tasks and compare each target with StealPolicy::dispatch_target fed the
/// same inputs. Returns the number of disagreements.
int check_dispatch(
        BlockedPool& bp,
        PolicyKind kind,
        PoolOptions options,
        int n,
        std::string* why) {
    int wrong = 0;
    std::thread client([&] {
        const Pool& pool = bp.pool;
        const Topology& topo = pool.topology();
        // Pinned to worker 0's CPU when possible, so that the pass-over of
        // the caller's own worker is exercised and the CPU cannot change
        // between the pool's look and ours.
        const bool pinned = pin_self(topo.cpu_of(0));
        const StealPolicy policy(topo, kind, options.steal);
        uint32_t rotor = submitter_rotor_seed(
                std::hash<std::thread::id>()(std::this_thread::get_id()));
        for (int i = 0; i < n; i++) {
            const MappingId id = make_mapping_id(3, uint32_t(i));
            const int ccd = pool.pick_ccd(id);
            const int expected = policy.dispatch_target(
                    topo,
                    ccd,
                    false,
                    -1,
                    rotor,
                    options.pin_workers && pinned,
                    [] {
                        return sched_getcpu();
                    });
            const std::vector<int64_t> before = bp.queued();
            bp.pool.submit(id, [] {});
            const std::vector<int64_t> after = bp.queued();
            int got = -1;
            for (size_t w = 0; w < after.size(); w++) {
                if (after[w] == before[w] + 1) {
                    got = int(w);
                }
            }
            if (got != expected) {
                wrong++;
                *why = "task " + std::to_string(i) + ": pool queued it on " +
                        std::to_string(got) + ", policy says " +
                        std::to_string(expected);
            }
        }
    });
    client.join();
    return wrong;
}

class PolicyDecisions : public ::testing::TestWithParam<PolicyKind> {};

} // namespace

// Same inputs, same dispatch target, on an emulated 4x2 part, with the
// default hash mapping and after publishing a traffic-built snapshot.
TEST_P(PolicyDecisions, PoolDispatchesAsThePolicySays) {
    const PolicyKind kind = GetParam();
    PoolOptions options;
    // Threshold 1: a blocker stolen across CCDs can leave its thief's own
    // blocker queued alone on a busy CCD, which only a remote thief at
    // threshold 1 takes (the default, 2 here, keeps it home).
    options.steal.cross_ccd_threshold = 1;
    BlockedPool bp("4x2", kind, options);
    ASSERT_TRUE(bp.ok) << "workers did not all take a blocker";
    std::string why;
    EXPECT_EQ(check_dispatch(bp, kind, options, 64, &why), 0) << why;

    std::vector<MappingId> ids;
    std::vector<int> ccds;
    for (uint32_t l = 0; l < 64; l++) {
        ids.push_back(make_mapping_id(3, l));
        ccds.push_back(int(l % 3)); // CCD 3 gets nothing: unlike the hash
    }
    bp.pool.set_mapping(std::make_shared<MappingSnapshot>(ids, ccds, 4));
    EXPECT_EQ(check_dispatch(bp, kind, options, 64, &why), 0) << why;
}

INSTANTIATE_TEST_SUITE_P(
        Kinds,
        PolicyDecisions,
        ::testing::Values(
                PolicyKind::ccd,
                PolicyKind::flat_steal,
                PolicyKind::round_robin),
        [](const auto& info) {
            return std::string(policy_name(info.param));
        });

// ---- the pure functions on a fake world -------------------------------------

namespace {

/// FakeWorld: per-worker task counts; try_steal takes one and returns the
/// victim + 1 (0: empty), recording the order of the questions asked.
struct FakeWorld {
    explicit FakeWorld(const Topology& t) : topo(t), tasks(t.num_workers()) {}
    const Topology& topo;
    std::vector<int> tasks;
    std::vector<int> asked;
    int try_steal(int v) {
        asked.push_back(v);
        if (tasks[v] > 0) {
            tasks[v]--;
            return v + 1;
        }
        return 0;
    }
    int64_t backlog(int c) const {
        int64_t b = 0;
        for (int i = 0; i < topo.ccd_size(c); i++) {
            b += tasks[topo.first_worker(c) + i];
        }
        return b;
    }
};

StealOutcome<int> round_of(
        const StealPolicy& p,
        FakeWorld& world,
        int w,
        uint64_t& rng,
        CrossCcdBackoff& backoff,
        bool ignore_backoff) {
    return p.steal_round<int>(
            world.topo,
            w,
            rng,
            backoff,
            ignore_backoff,
            [&](int v) {
                return world.try_steal(v);
            },
            [&](int c) {
                return world.backlog(c);
            });
}

} // namespace

TEST(StealRound, SiblingsFirstThenRemoteAboveThreshold) {
    const Topology topo = Topology::from_spec("3x2");
    StealConfig config;
    config.cross_ccd_threshold = 2;
    const StealPolicy policy(topo, PolicyKind::ccd, config);
    FakeWorld world(topo);
    world.tasks = {0, 0, 1, 0, 1, 1}; // CCD 1 holds 1 (below), CCD 2 holds 2
    uint64_t rng = worker_random_seed(0);
    CrossCcdBackoff backoff(config.max_backoff_shift);
    StealOutcome<int> got = round_of(policy, world, 0, rng, backoff, false);
    ASSERT_GE(got.victim, 4);
    EXPECT_TRUE(got.cross_ccd);
    EXPECT_EQ(world.asked.front(), 1) << "the sibling is asked first";
    for (int v : world.asked) {
        EXPECT_NE(topo.ccd_of(v), 1) << "CCD 1 is below the threshold";
    }
    // Now CCD 2 holds 1: nothing passes; the failure starts the backoff.
    world.asked.clear();
    got = round_of(policy, world, 0, rng, backoff, false);
    EXPECT_EQ(got.victim, -1);
    EXPECT_EQ(backoff.rounds_to_skip(), 1);
    // The next round skips the remote step, unless told to ignore it.
    world.asked.clear();
    got = round_of(policy, world, 0, rng, backoff, false);
    EXPECT_EQ(world.asked, std::vector<int>{1});
}

TEST(StealRound, SameSeedSameOrder) {
    const Topology topo = Topology::from_spec("12x8");
    const StealPolicy policy(topo, PolicyKind::flat_steal, StealConfig());
    for (int w : {0, 17, 95}) {
        std::vector<int> orders[2];
        for (int rep = 0; rep < 2; rep++) {
            FakeWorld world(topo);
            uint64_t rng = worker_random_seed(w);
            CrossCcdBackoff backoff(6);
            for (int r = 0; r < 5; r++) {
                round_of(policy, world, w, rng, backoff, false);
            }
            orders[rep] = world.asked;
        }
        EXPECT_EQ(orders[0], orders[1]);
        EXPECT_EQ(orders[0].size(), size_t(5 * 95));
    }
}

TEST(WakeHelper, NearVictimsThenRemoteWhenBacklogPasses) {
    const Topology topo = Topology::from_spec("2x2");
    const StealPolicy policy(topo, PolicyKind::ccd, StealConfig());
    std::vector<int> asked;
    uint32_t rotor = 7;
    std::vector<bool> parked = {false, false, true, false};
    auto try_unpark = [&](int v) {
        asked.push_back(v);
        return bool(parked[v]);
    };
    // Backlog 0 on the target's CCD: no remote CCD is asked.
    EXPECT_EQ(
            policy.wake_helper(
                    topo,
                    0,
                    rotor,
                    try_unpark,
                    [](int) {
                        return int64_t(0);
                    }),
            -1);
    EXPECT_EQ(asked, std::vector<int>{1});
    EXPECT_EQ(rotor, 8u);
    asked.clear();
    EXPECT_EQ(
            policy.wake_helper(
                    topo,
                    0,
                    rotor,
                    try_unpark,
                    [](int) {
                        return int64_t(3);
                    }),
            2);
    EXPECT_EQ(asked, (std::vector<int>{1, 2}));
    // round_robin wakes nobody and leaves the rotor alone.
    const StealPolicy rr(topo, PolicyKind::round_robin, StealConfig());
    asked.clear();
    EXPECT_EQ(
            rr.wake_helper(
                    topo,
                    0,
                    rotor,
                    try_unpark,
                    [](int) {
                        return int64_t(3);
                    }),
            -1);
    EXPECT_TRUE(asked.empty());
    EXPECT_EQ(rotor, 9u);
}
