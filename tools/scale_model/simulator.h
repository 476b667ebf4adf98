/**
 * Simulator: a deterministic discrete-event model of a pool on a chiplet
 * part: M CCDs x C cores, one L3Cache per CCD, the shared Dram, closed-loop
 * clients, and the variant's dispatch, wake-up and steal decisions made by
 * the project's StealPolicy (dispatch_target, wake_helper, steal_round) on
 * simulated queues.
 *
 * Workers follow the pool's work loop (Pool.h): own queue, then a steal
 * round; idle, they poll every poll_ns for spin_polls rounds, then take one
 * last look that ignores the cross-CCD backoff and park; a parked worker
 * starts looking wake_ns after someone wakes it. V0 (IVF) replaces the
 * queues with one shared FIFO whose every pop moves its cache line to the
 * popping core (serialised; cross_ccd_ns when more than one CCD is on).
 *
 * A task's time: task_overhead + bytes served by its CCD's L3 x
 * l3_ns_per_byte + bytes from DRAM x max(dram_ns_per_byte, streams /
 * bandwidth) (streaming workloads), or per block l3/dram latency plus the
 * same per-byte costs (random-access workloads), + cross_ccd_ns when it
 * was stolen from another CCD (its descriptor and query travel).
 *
 * Clients: `clients`, or clients_per_core x workers, each with one query
 * in flight;
 * a client spends client_bytes x l3_ns_per_byte on its own core (the
 * coarse quantizer) before submitting the next query's tasks.
 */

#pragma once

#include "memory.h"
#include "placement.h"
#include "workload.h"

#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/StealPolicy.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sim {

/// paper_steal_config: V2's steal thresholds as first built.
inline faiss::ccd::StealConfig paper_steal_config() {
    faiss::ccd::StealConfig s;
    s.cross_ccd_threshold = 1;
    return s;
}

/// paper_monitor_config: V2's monitor windows as first built.
inline faiss::ccd::MonitorConfig paper_monitor_config() {
    faiss::ccd::MonitorConfig m;
    m.fast_window_s = 10;
    m.bucket_s = 1;
    return m;
}

struct SimConfig {
    Part part = genoa96();
    int enabled_ccds = 0; ///< 0: all of the part's
    Variant variant = Variant::V2;
    ScanCosts costs;
    /// V1, V2: V2 as the paper and the pool's first version had it
    /// (cross-CCD threshold 1, a 10 s fast window in 1 s buckets); the
    /// pool's defaults today are V3's, chosen by this model's sweeps.
    faiss::ccd::StealConfig steal = paper_steal_config();
    faiss::ccd::MonitorConfig monitor = paper_monitor_config();
    int v3_cross_ccd_threshold = -1; ///< -1: cores per CCD
    double v3_fast_window_s = 2;     ///< V3's monitor fast window
    double tick_s = 0.5;             ///< Monitor::start's default period
    int clients_per_core = 2;
    int clients = 0; ///< > 0: this many clients instead
    double warmup_s = 1.0;
    double measure_s = 1.0;
    double poll_ns = 1000;
    int spin_polls = 100;
    double wake_ns = 5000;
    uint64_t seed = 1;
};

struct SimStats {
    std::string variant;
    int ccds = 0;
    int workers = 0;
    // Measured window (tasks started, queries finished inside it).
    uint64_t queries = 0;
    uint64_t tasks = 0;
    double qps = 0;
    double p50_us = 0;
    double p999_us = 0;
    double mean_us = 0;
    uint64_t l3_bytes = 0;
    uint64_t dram_bytes = 0;
    uint64_t local_pops = 0;
    uint64_t intra_steals = 0;
    uint64_t cross_steals = 0;
    uint64_t parks = 0;
    double busy_fraction = 0; ///< worker time spent running tasks
    double l3_miss_rate() const {
        const double all = double(l3_bytes + dram_bytes);
        return all > 0 ? double(dram_bytes) / all : 0;
    }
    /// cross_ratio: cross-CCD steals over all steals (PoolStats's), NaN
    /// for the shared queue (no steals exist there).
    double cross_ratio = 0;
    // Whole run, for the conservation checks.
    uint64_t tasks_submitted = 0;
    uint64_t tasks_completed = 0;
    uint64_t exactly_once_violations = 0;
    uint64_t bytes_requested = 0;
    uint64_t bytes_served_l3 = 0;
    uint64_t bytes_served_dram = 0;
    size_t remaps = 0;
    size_t replicated_ids = 0;
    uint64_t events = 0;
    double sim_end_s = 0;
    /// decisions: the first dispatch targets and steal victims, in order
    /// (tests compare them with the policy's own answers).
    std::vector<int> first_targets;
    std::vector<int> first_victims;
};

/// run_simulation: one run; the same config and workload give the same
/// stats, bit for bit.
SimStats run_simulation(const SimConfig& config, const Workload& workload);

} // namespace sim
