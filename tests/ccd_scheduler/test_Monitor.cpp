// Monitor: windowed traffic, re-mapping with a fake clock, and the
// placement snapshot swap under concurrent submitters.

#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/TaskGroup.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "stress_scale.h"

using namespace faiss::ccd;

namespace {

/// feed: `bytes` on each id, recorded from this (outside) thread.
void feed(Monitor& m, const std::vector<MappingId>& ids, uint64_t bytes) {
    for (MappingId id : ids) {
        m.record(id, 1, bytes);
    }
}

/// ids_hashed_to: n ids the default hash puts on CCD `ccd`.
std::vector<MappingId> ids_hashed_to(int ccd, int nccd, int n, uint32_t table) {
    std::vector<MappingId> ids;
    HashMapping hash;
    for (uint32_t l = 0; int(ids.size()) < n; l++) {
        if (hash.pick_ccd(make_mapping_id(table, l), nccd) == ccd) {
            ids.push_back(make_mapping_id(table, l));
        }
    }
    return ids;
}

TEST(Monitor, RemapsWhenTheHashMapIsUnbalanced) {
    Pool pool(Topology::from_spec("4x2"));
    auto clock = std::make_shared<ManualClock>(0);
    MonitorConfig config;
    Monitor monitor(pool, config, clock);
    // All traffic on ids that hash to CCD 0: imbalance 4.
    auto hot = ids_hashed_to(0, 4, 64, 1);
    feed(monitor, hot, 1000);
    clock->advance(0.5);
    EXPECT_TRUE(monitor.tick());
    MonitorStats s = monitor.stats();
    EXPECT_EQ(s.epoch, 1u);
    EXPECT_EQ(s.remaps, 1u);
    EXPECT_EQ(s.records, 64u);
    EXPECT_DOUBLE_EQ(s.last_remap.imbalance_before, 4.0);
    EXPECT_LE(s.last_remap.imbalance_after, 1.01);
    EXPECT_LE(s.imbalance, 1.01);
    EXPECT_EQ(s.last_remap.ids_moved, 48u); // 3 of 4 CCDs' worth left CCD 0
    EXPECT_EQ(s.last_remap.traffic_moved, 48u * 1000);
    // The pool now places those ids by the new map.
    std::vector<int> per_ccd(4, 0);
    for (MappingId id : hot) {
        per_ccd[pool.pick_ccd(id)]++;
    }
    EXPECT_EQ(per_ccd, std::vector<int>({16, 16, 16, 16}));

    // Same traffic again: balanced, no re-map.
    feed(monitor, hot, 1000);
    clock->advance(2);
    EXPECT_FALSE(monitor.tick());
    EXPECT_EQ(monitor.stats().epoch, 1u);
}

TEST(Monitor, FollowsDriftAndForgetsOldTraffic) {
    Pool pool(Topology::from_spec("2x1"));
    auto clock = std::make_shared<ManualClock>(0);
    MonitorConfig config;
    config.fast_window_s = 10;
    Monitor monitor(pool, config, clock);
    auto a = ids_hashed_to(0, 2, 20, 1);
    for (int t = 0; t < 5; t++) {
        feed(monitor, a, 100);
        clock->advance(1);
        monitor.tick();
    }
    const uint64_t epoch_a = pool.mapping_epoch();
    EXPECT_GE(epoch_a, 1u);
    // The hot set moves to other ids, all hashed to CCD 1.
    auto b = ids_hashed_to(1, 2, 20, 2);
    for (int t = 0; t < 12; t++) {
        feed(monitor, b, 100);
        clock->advance(1);
        monitor.tick();
    }
    MonitorStats s = monitor.stats();
    EXPECT_GT(s.epoch, epoch_a);
    EXPECT_LE(s.imbalance, config.imbalance_threshold);
    // After 12 s the fast window holds only b; the slow one both.
    EXPECT_EQ(s.fast_bytes, 10u * 20 * 100);
    EXPECT_EQ(s.slow_bytes, 17u * 20 * 100);
}

// Ids come and go for much longer than the slow window: the published
// snapshot holds only ids the slow window still has, not every id ever
// placed.
TEST(Monitor, SnapshotStaysBoundedAsIdsComeAndGo) {
    Pool pool(Topology::from_spec("2x1"));
    auto clock = std::make_shared<ManualClock>(0);
    MonitorConfig config;
    config.fast_window_s = 2;
    config.slow_window_s = 6;
    config.min_remap_interval_s = 0;
    Monitor monitor(pool, config, clock);
    size_t largest = 0;
    for (uint32_t generation = 0; generation < 40; generation++) {
        // 20 fresh ids a second, all hashed to one CCD: a re-map each time.
        const auto ids = ids_hashed_to(int(generation % 2), 2, 20, generation);
        feed(monitor, ids, 100);
        clock->advance(1);
        monitor.tick();
        const MonitorStats s = monitor.stats();
        largest = std::max(largest, size_t(s.last_remap.ids_placed));
    }
    EXPECT_GE(monitor.stats().remaps, 20u);
    // The slow window spans ~6 generations of 20 ids (+ one bucket).
    EXPECT_LE(largest, 8u * 20);
}

TEST(Monitor, SkipsRemapsThatCannotHelp) {
    Pool pool(Topology::from_spec("4x1"));
    auto clock = std::make_shared<ManualClock>(0);
    Monitor monitor(pool, MonitorConfig(), clock);
    feed(monitor, {make_mapping_id(1, 1)}, 1000000); // one id, all traffic
    clock->advance(1);
    EXPECT_FALSE(monitor.tick());
    EXPECT_EQ(pool.mapping_epoch(), 0u);
}

TEST(Monitor, RespectsMinimumInterval) {
    Pool pool(Topology::from_spec("2x1"));
    auto clock = std::make_shared<ManualClock>(0);
    MonitorConfig config;
    config.min_remap_interval_s = 5;
    config.fast_window_s = 10; // the traffic fed at 1 s is still seen at 7 s
    Monitor monitor(pool, config, clock);
    feed(monitor, ids_hashed_to(0, 2, 8, 1), 10);
    clock->advance(1);
    EXPECT_TRUE(monitor.tick());
    feed(monitor, ids_hashed_to(1, 2, 8, 2), 1000); // new imbalance
    clock->advance(1);
    EXPECT_FALSE(monitor.tick()); // too soon
    clock->advance(5);
    EXPECT_TRUE(monitor.tick());
}

TEST(Monitor, WorkersRecordIntoTheirOwnBuffers) {
    Pool pool(Topology::from_spec("2x2"));
    auto clock = std::make_shared<ManualClock>(0);
    Monitor monitor(pool, MonitorConfig(), clock);
    const int n = 10000;
    {
        TaskGroup group(pool);
        for (int i = 0; i < n; i++) {
            MappingId id = make_mapping_id(1, uint32_t(i % 50));
            group.submit(id, [&monitor, id] {
                monitor.record(id, 1, 3);
            });
        }
        group.wait();
    }
    monitor.tick();
    MonitorStats s = monitor.stats();
    EXPECT_EQ(s.records, uint64_t(n));
    EXPECT_EQ(s.fast_bytes, uint64_t(n) * 3);
}

// Found by fuzz_scheduler_config (monitor-period): a period beyond 2^63 ns
// overflowed condition_variable::wait_for, and the thread spun.
TEST(Monitor, StartRejectsPeriodsOutOfRange) {
    Pool pool(Topology::from_spec("1x1"));
    Monitor monitor(pool);
    for (double p : {0.0, -1.0, 3601.0, 1e10, std::nan("")}) {
        EXPECT_THROW(monitor.start(p), std::invalid_argument) << p;
    }
    EXPECT_THROW(
            monitor.start(std::numeric_limits<double>::infinity()),
            std::invalid_argument);
    monitor.start(3600);
    monitor.stop();
}

TEST(Monitor, BackgroundThreadTicks) {
    Pool pool(Topology::from_spec("2x1"));
    Monitor monitor(pool);
    feed(monitor, ids_hashed_to(0, 2, 8, 1), 10);
    monitor.start(0.005);
    for (int i = 0; i < 2000 && monitor.stats().records == 0; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    monitor.stop();
    EXPECT_EQ(monitor.stats().records, 8u);
    EXPECT_THROW(monitor.start(0), std::invalid_argument);
}

// Snapshot swap: 8 outside submitters while another thread publishes a new
// placement every millisecond. Every task runs exactly once; old snapshots
// are freed (ASAN/LSan would see a leak) and never early (TSAN/ASAN would
// see a use after free in pick_ccd).
TEST(MonitorSnapshotSwap, ExactlyOnceUnderConstantRemaps) {
    Pool pool(Topology::from_spec("4x2"));
    const int kSubmitters = 8;
    const int per_submitter = int(scaled(40000));
    std::vector<std::atomic<uint8_t>> hits(size_t(kSubmitters) * per_submitter);
    std::atomic<bool> done{false};
    std::atomic<int> swaps{0};
    std::weak_ptr<const Mapping> first_snapshot;
    std::thread remapper([&] {
        std::vector<MappingId> ids;
        for (uint32_t l = 0; l < 256; l++) {
            ids.push_back(make_mapping_id(1, l));
        }
        uint64_t round = 0;
        while (!done.load()) {
            std::vector<int> ccds(ids.size());
            for (size_t i = 0; i < ids.size(); i++) {
                ccds[i] = int((i + round) % 4);
            }
            auto snap = std::make_shared<MappingSnapshot>(ids, ccds, 4);
            if (round == 0) {
                first_snapshot = snap;
            }
            pool.set_mapping(std::move(snap));
            round++;
            swaps.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    std::vector<std::thread> submitters;
    for (int s = 0; s < kSubmitters; s++) {
        submitters.emplace_back([&, s] {
            TaskGroup group(pool);
            for (int i = 0; i < per_submitter; i++) {
                size_t slot = size_t(s) * per_submitter + i;
                group.submit(make_mapping_id(1, uint32_t(i % 300)), [&, slot] {
                    hits[slot].fetch_add(1, std::memory_order_relaxed);
                });
            }
            group.wait();
        });
    }
    for (auto& t : submitters) {
        t.join();
    }
    done.store(true);
    remapper.join();
    size_t bad = 0;
    for (auto& h : hits) {
        bad += h.load() != 1;
    }
    EXPECT_EQ(bad, 0u);
    EXPECT_GT(swaps.load(), 1);
    EXPECT_EQ(pool.mapping_epoch(), uint64_t(swaps.load()));
    EXPECT_TRUE(first_snapshot.expired()) << "an old snapshot was kept";
}

} // namespace
