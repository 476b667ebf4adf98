/**
 * costs.h: what placement costs in time.
 *
 * run_build_time: building a map for every id of the workload (15 tables x
 * 8192 lists) on the CCDs of `topology`, from expected Zipf traffic:
 * map_hot_cold, map_migration_aware (its current map: the hot-cold map
 * of the traffic one drift step earlier), MappingSnapshot construction, and
 * a whole Monitor re-map (RemapRecord::build_ms, and the tick() that
 * contains it, drain included), first with no previous snapshot, then
 * with one (the stickiness step runs). Medians of `runs`, wall-clock and
 * the thread's CPU time (on a shared machine the wall clock also counts
 * time the thread was not running). Besides, the two per-tick costs of a
 * Monitor that do not depend on re-mapping, in thread CPU time:
 * TrafficWindow::add per record (a tick makes two per record drained) and
 * the placement's imbalance over the fast window (Monitor::loads_under: one
 * lookup per id in it).
 *
 * run_submit_path: a real Pool (FAISS_CCD_TOPOLOGY or hwloc, ccd policy)
 * running "small-list scan tasks" (L2 distances from one query to the
 * `vectors` x `dim` floats of one list, keeping the minimum), one TaskGroup
 * of `tasks_per_query` tasks per query, queries back to back from one
 * client thread. Five scenarios, interleaved for `rounds` rounds (A B C D E,
 * B C D E A, ...: each round starts one later), every rep on the same
 * balanced map; the monitored scenarios each keep one monitor for the
 * whole run:
 *   off           no monitor;
 *   on            each task calls Monitor::record; the monitor ticks every
 *                 `tick_period_s` on its own thread;
 *   on+swaps      as on, plus a thread that publishes a new MappingSnapshot
 *                 every `swap_period_s` (set_mapping);
 *   swaps         the swapping thread alone, no monitor (to tell the two
 *                 costs apart);
 *   wakeups       a thread that wakes every `swap_period_s` and does
 *                 nothing: what the swapping thread costs by merely
 *                 waking up on a machine whose cores are all busy.
 * Reported: ns per task (wall / tasks) per rep, medians, and the overhead
 * against `off` as the median of the per-round ratios. Besides, in the
 * calling thread's CPU time (medians; the wall clock of a shared machine
 * counts time a thread was not running): the bare cost of record() (from
 * an outside thread and from a worker), of a tick per drained record, of
 * placement lookups, of set_mapping, and of one task run inline (once
 * per round).
 */

#pragma once

#include "workload.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bench {
namespace mapping {

struct BuildPlan {
    int runs = 20;
    std::string topology = "12x8"; ///< for the Monitor re-map
    WorkloadConfig workload;
};

/// Timing: medians, milliseconds.
struct Timing {
    double wall_ms = 0;
    double cpu_ms = 0;
};

struct BuildResult {
    int num_ids = 0;
    int num_ccds = 0;
    int runs = 0;
    Timing hot_cold;
    Timing migration_aware;
    Timing snapshot;
    // Monitor re-map of every id; "first": no previous snapshot, "again":
    // with one (its stickiness step). Wall-clock medians, ms.
    double monitor_build_first_ms = 0; ///< RemapRecord::build_ms
    double monitor_tick_first_ms = 0;  ///< the whole tick() that re-mapped
    double monitor_build_again_ms = 0;
    double monitor_tick_again_ms = 0;
    // Per-tick costs (thread CPU time, medians).
    double window_add_ns = 0;  ///< TrafficWindow::add, per record
    double loads_under_ns = 0; ///< per id in the fast window
    uint64_t window_ids = 0;   ///< ids in that window
    // Quality of the maps built (same traffic, same runs).
    double hot_cold_imbalance = 0;
    double migration_aware_imbalance = 0;
    double moved_share_hot_cold = 0;        ///< traffic share moved
    double moved_share_migration_aware = 0; ///< vs the current map
};

BuildResult run_build_time(const BuildPlan& plan);

struct SubmitPlan {
    int rounds = 40;
    int queries_per_rep = 200;
    int tasks_per_query = 64; ///< nprobe
    int vectors = 64;         ///< per list
    int dim = 128;
    int lists = 512; ///< distinct lists of data (16 MiB)
    double tick_period_s = 0.01;
    double swap_period_s = 0.001;
    int record_batches = 50; ///< record() micro-benchmark
    int record_batch = 10000;
    int lookups = 1 << 20; ///< pick_ccd micro-benchmark, per pass
    WorkloadConfig workload;
};

struct ScenarioResult {
    std::string name;
    std::vector<double> ns_per_task; ///< per rep, in round order
    double median_ns = 0;
    /// overhead_pct: median over rounds of (this / off) - 1, in percent.
    double overhead_pct = 0;
    double overhead_ci_pct[2] = {0, 0}; ///< ~95% interval of that median
    double swaps_per_s = 0;             ///< set_mapping calls by the swapper
    double remaps_per_rep = 0;          ///< the monitor's own re-maps
    double ticks_per_rep = 0;
};

struct LookupResult {
    std::string name;
    double zipf_ns = 0;    ///< ids drawn from the workload
    double uniform_ns = 0; ///< ids uniform over every id
};

struct SubmitResult {
    std::string topology;
    int num_ccds = 0;
    /// stream_imbalance: of one rep's task bytes under the map every rep
    /// starts from (and its mirror, the other map on+swaps publishes).
    double stream_imbalance = 0;
    double task_inline_ns = 0; ///< one task run on the client thread
    std::vector<ScenarioResult> scenarios; ///< off, on, on+swaps, swaps,
                                           ///< wakeups
    double record_outside_ns = 0;  ///< record() from a non-worker thread
    double record_worker_ns = 0;   ///< record() from inside a task
    double tick_ns_per_record = 0; ///< background cost of one record
    uint64_t tick_remaps = 0;      ///< re-maps during that measurement
    std::vector<LookupResult> lookups;
    double set_mapping_ns = 0; ///< one call, no concurrent reader
    /// checks_ok: every task ran (its result slot was written) and every
    /// record() reached the monitor.
    bool checks_ok = true;
};

SubmitResult run_submit_path(const SubmitPlan& plan);

} // namespace mapping
} // namespace bench
