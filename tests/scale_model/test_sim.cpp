// bench_sim's model: deterministic for a seed; conserves tasks (each runs
// exactly once) and bytes (L3 + DRAM = requested); and decides as the pool
// does on the same inputs: the same CCD for every id after the same
// traffic (the real Monitor on a real Pool against the simulator's
// placement) and the same dispatch targets for a seed.

#include "experiments.h"
#include "placement.h"
#include "simulator.h"
#include "workload.h"

#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/Pool.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

using namespace sim;

namespace {

const Variant kAll[] = {Variant::V0, Variant::V1, Variant::V2, Variant::V3};

/// lists_file: a small IVF list-size file (64 lists, skewed sizes).
std::string lists_file() {
    const std::string path = ::testing::TempDir() + "/sim_test_" +
            std::to_string(getpid()) + ".lists";
    std::ofstream f(path);
    f << "# test lists\n32 64 8\n";
    for (int i = 0; i < 64; i++) {
        f << (50 + (i * 37) % 400) << " " << i << "\n";
    }
    return path;
}

IvfWorkload small_ivf(double rotate_s = 0) {
    IvfConfig c;
    c.lists_file = lists_file();
    c.block_bytes = 4096;
    c.rotate_s = rotate_s;
    return IvfWorkload(c);
}

HnswWorkload small_hnsw() {
    HnswConfig c;
    c.tables = 8;
    c.nodes = 2000;
    c.d = 64;
    c.mean_nodes = 200;
    return HnswWorkload(c);
}

SimConfig small_config(Variant v) {
    SimConfig c;
    c.part = genoa96();
    c.part.l3_bytes = 256 << 10; // small caches: misses happen
    c.enabled_ccds = 3;
    c.part.cores_per_ccd = 2;
    c.variant = v;
    c.warmup_s = 0.25; // past the first monitor ticks
    c.measure_s = 0.05;
    c.tick_s = 0.1;
    c.monitor.min_remap_interval_s = 0.1;
    return c;
}

void expect_same(const SimStats& a, const SimStats& b) {
    EXPECT_EQ(a.queries, b.queries);
    EXPECT_EQ(a.tasks, b.tasks);
    EXPECT_EQ(a.qps, b.qps);
    EXPECT_EQ(a.p50_us, b.p50_us);
    EXPECT_EQ(a.p999_us, b.p999_us);
    EXPECT_EQ(a.l3_bytes, b.l3_bytes);
    EXPECT_EQ(a.dram_bytes, b.dram_bytes);
    EXPECT_EQ(a.cross_steals, b.cross_steals);
    EXPECT_EQ(a.intra_steals, b.intra_steals);
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.remaps, b.remaps);
    EXPECT_EQ(a.first_targets, b.first_targets);
    EXPECT_EQ(a.first_victims, b.first_victims);
}

} // namespace

TEST(SimDeterminism, SameSeedSameStats) {
    const IvfWorkload ivf = small_ivf();
    const HnswWorkload hnsw = small_hnsw();
    for (Variant v : kAll) {
        for (const Workload* w :
             {(const Workload*)&ivf, (const Workload*)&hnsw}) {
            SCOPED_TRACE(std::string(variant_name(v)) + " " + w->name());
            expect_same(
                    run_simulation(small_config(v), *w),
                    run_simulation(small_config(v), *w));
        }
    }
    // Another seed is another run.
    SimConfig other = small_config(Variant::V2);
    other.seed = 2;
    EXPECT_NE(
            run_simulation(other, ivf).first_targets,
            run_simulation(small_config(Variant::V2), ivf).first_targets);
}

TEST(SimDeterminism, SameSeedSameReportJson) {
    Options o;
    o.data_dir = BENCH_SIM_DIR "/data";
    o.quick = true;
    o.warmup_s = 0.02;
    o.measure_s = 0.02;
    o.sweeps = false;
    o.parts = {"genoa96"};
    const std::string a = bench::to_json(build_report(o, nullptr), true);
    const std::string b = bench::to_json(build_report(o, nullptr), true);
    EXPECT_EQ(a, b);
    EXPECT_NE(a.find("\"benchmark\": \"sim\""), std::string::npos);
}

TEST(SimConservation, EveryTaskOnceEveryByteServed) {
    const IvfWorkload ivf = small_ivf(0.2);
    const HnswWorkload hnsw = small_hnsw();
    for (Variant v : kAll) {
        for (const Workload* w :
             {(const Workload*)&ivf, (const Workload*)&hnsw}) {
            SCOPED_TRACE(std::string(variant_name(v)) + " " + w->name());
            const SimStats s = run_simulation(small_config(v), *w);
            EXPECT_GT(s.tasks_submitted, 0u);
            EXPECT_EQ(s.tasks_completed, s.tasks_submitted);
            EXPECT_EQ(s.exactly_once_violations, 0u);
            EXPECT_EQ(
                    s.bytes_served_l3 + s.bytes_served_dram,
                    s.bytes_requested);
            EXPECT_GT(s.bytes_served_dram, 0u);
            EXPECT_GT(s.queries, 0u);
        }
    }
}

// The real Monitor on a real Pool and the simulator's Placement, fed the
// same traffic at the same (manual / simulated) times, put every id on the
// same CCD, re-map after re-map.
TEST(SimMatchesPool, SamePlacementAfterTheSameTraffic) {
    const IvfWorkload ivf = small_ivf();
    faiss::ccd::PoolOptions po;
    po.pin_workers = false;
    faiss::ccd::Pool pool(
            faiss::ccd::Topology::from_spec("4x1"),
            faiss::ccd::PolicyKind::ccd,
            po);
    auto clock = std::make_shared<faiss::ccd::ManualClock>(0);
    faiss::ccd::MonitorConfig mc;
    faiss::ccd::Monitor monitor(pool, mc, clock);
    Placement placement(Variant::V2, mc, 4, 32 << 20, ivf);
    Rng rng(5);
    std::vector<TaskSpec> specs;
    size_t remaps = 0;
    for (int tick = 1; tick <= 40; tick++) {
        const double t = 0.5 * tick;
        // A hot set that moves every 4 s, so re-maps keep coming.
        for (int q = 0; q < 200; q++) {
            ivf.query(rng, t * 0.5, &specs);
            for (const TaskSpec& s : specs) {
                const uint64_t bytes = ivf.item_bytes(s.item);
                monitor.record(ivf.id_of(s.item), 1, bytes);
                placement.record(s.item, bytes);
            }
        }
        clock->set(t);
        const bool a = monitor.tick();
        const bool b = placement.tick(t);
        ASSERT_EQ(a, b) << "tick " << tick;
        remaps += a;
        for (uint32_t i = 0; i < ivf.num_items(); i++) {
            ASSERT_EQ(pool.pick_ccd(ivf.id_of(i)), placement.ccd_of(i, 0))
                    << "list " << i << " at tick " << tick;
        }
    }
    EXPECT_GE(remaps, 1u);
}

// The simulator's first dispatch targets are StealPolicy's answers for
// client 0's first query, its rotor seed and the hash mapping (what the
// pool answers for the same inputs: test_PolicyDecisions). At that instant
// every worker is parked and nothing has been popped, so the wake-ups in
// between (which advance the rotor, in the pool as here) replay exactly.
TEST(SimMatchesPool, SameDispatchTargetsForASeed) {
    const IvfWorkload ivf = small_ivf();
    for (Variant v : {Variant::V1, Variant::V2}) {
        SCOPED_TRACE(variant_name(v));
        SimConfig c = small_config(v);
        const SimStats s = run_simulation(c, ivf);
        const faiss::ccd::Topology topo =
                faiss::ccd::Topology::from_spec("3x2");
        const faiss::ccd::StealPolicy policy(
                topo,
                v == Variant::V1 ? faiss::ccd::PolicyKind::flat_steal
                                 : faiss::ccd::PolicyKind::ccd,
                c.steal);
        Rng rng(c.seed * 1000003);
        std::vector<TaskSpec> specs;
        ivf.query(rng, 0, &specs);
        uint32_t rotor = faiss::ccd::submitter_rotor_seed(c.seed * 131);
        const faiss::ccd::HashMapping hash;
        std::vector<bool> parked(topo.num_workers(), true);
        std::vector<int64_t> queued(topo.num_workers(), 0);
        ASSERT_GE(s.first_targets.size(), specs.size());
        for (size_t i = 0; i < specs.size(); i++) {
            const int ccd = v == Variant::V1
                    ? -1
                    : hash.pick_ccd(ivf.id_of(specs[i].item), 3);
            const int target = policy.dispatch_target(
                    topo,
                    ccd,
                    false,
                    -1,
                    rotor,
                    false,
                    [] {
                        return -1;
                    });
            EXPECT_EQ(s.first_targets[i], target) << "task " << i;
            queued[target]++;
            if (parked[target]) {
                parked[target] = false;
                continue;
            }
            policy.wake_helper(
                    topo,
                    target,
                    rotor,
                    [&](int w) {
                        const bool was = parked[w];
                        parked[w] = false;
                        return bool(was);
                    },
                    [&](int cc) {
                        return queued[2 * cc] + queued[2 * cc + 1];
                    });
        }
    }
}
