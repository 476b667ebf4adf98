/**
 * drift.h: per-CCD traffic imbalance of four placements under the drifting
 * Zipf workload (workload.h), in simulated time.
 *
 * Each simulated second draws `accesses_per_s` list scans and charges every
 * scan's bytes to the CCD each placement gives its id:
 *   hash             HashMapping (the pool's default);
 *   round-robin      global list index (table * 8192 + list) mod nCCD, the
 *                    static spread a topology-blind dispatcher gives;
 *   paper            a Monitor with migration_aware = false (Algorithm 1);
 *   migration-aware  a Monitor with migration_aware = true;
 * a what-if, the same two monitors with a shorter fast window:
 *   paper (2 s), migration-aware (2 s);
 * and two references that no scheduler can run:
 *   oracle           map_hot_cold on that very second's traffic;
 *   lower-bound      max(1, hottest id's bytes / mean per-CCD bytes).
 * Every monitor (MonitorConfig defaults: fast window 10 s, slow 60 s,
 * threshold 1.2, unless its name says otherwise) watches its own Pool of
 * the emulated topology (ccd policy; its workers stay idle, only its
 * placement is used), sees every access through record() from this thread,
 * and tick()s once per simulated second on a ManualClock. Imbalance of a
 * second = max/mean of that second's per-CCD bytes under the placement in
 * force during it.
 */

#pragma once

#include "workload.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bench {
namespace mapping {

struct DriftPlan {
    std::string topology = "4x2"; ///< Topology::from_spec
    int seconds = 120;            ///< simulated seconds
    int accesses_per_s = 40000;   ///< list scans per simulated second
    WorkloadConfig workload;
    uint64_t seed = 7;                ///< the access stream (ranking: workload)
    double paper_fast_window_s = 10;  ///< the paper's (and first) window
    double what_if_fast_window_s = 2; ///< MonitorConfig's default today
};

/// Summary: of a per-second series.
struct Summary {
    double mean = 0;
    double p95 = 0;
    double max = 0;
};
Summary summarize(const std::vector<double>& values);

struct PlacementSeries {
    std::string name;
    std::vector<double> imbalance; ///< per simulated second
    Summary all;                   ///< every second
    Summary steady;                ///< seconds >= the fast window
};

/// RemapInfo: one re-map of a monitor (RemapRecord plus the window's size).
struct RemapInfo {
    double time = 0;
    double imbalance_before = 0; ///< fast window, old map
    double imbalance_after = 0;  ///< fast window, new map
    uint64_t ids_placed = 0;
    uint64_t ids_moved = 0;
    uint64_t traffic_moved = 0; ///< fast-window bytes of the moved ids
    uint64_t window_bytes = 0;  ///< fast-window bytes in all
    double build_ms = 0;        ///< RemapRecord::build_ms
};

struct MonitorRun {
    std::string name;
    bool migration_aware = false;
    double fast_window_s = 0;
    std::vector<RemapInfo> remaps;
    std::vector<double> window_imbalance; ///< stats() after each tick
    std::vector<double> tick_ms;          ///< wall time of each tick()
    uint64_t records = 0;                 ///< record() calls drained
};

struct DriftResult {
    std::string spec;     ///< e.g. "12x8"
    std::string topology; ///< Topology::describe()
    int num_ccds = 0;
    int seconds = 0;
    int accesses_per_s = 0;
    int steady_from_s = 0;
    std::vector<int> drift_at_s;       ///< seconds that began with a drift
    std::vector<uint64_t> bytes_per_s; ///< traffic of each second
    /// series: hash, round-robin, then one per monitor, oracle,
    /// lower-bound.
    std::vector<PlacementSeries> series;
    std::vector<MonitorRun> monitors; ///< in the order of their series
    double wall_s = 0;
    /// consistent: every placement saw every second's bytes, and each
    /// monitor drained every record.
    bool consistent = true;
};

DriftResult run_drift(const DriftPlan& plan);

} // namespace mapping
} // namespace bench
