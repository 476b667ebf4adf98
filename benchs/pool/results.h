/**
 * results.h: what one bench_pool run measured, and its report (tables,
 * plots and targets in contrib/report.py's schema: common/report.h).
 */

#pragma once

#include <faiss/ccd_scheduler/PoolStats.h>

#include "common/report.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

/// PoolCounters: a pool's counters over the measured repetitions of one
/// scenario (absent for contenders that are not a Pool).
struct PoolCounters {
    bool present = false;
    faiss::ccd::PoolStats delta;
};

struct ThroughputRow {
    std::string contender;
    int submitters = 0;
    int64_t tasks = 0;         ///< per repetition, all submitters
    std::vector<double> rates; ///< tasks/s, one per repetition
    double median_rate = 0;
    double best_rate = 0; ///< the fastest repetition: the least disturbed
    PoolCounters counters;
};

struct LatencyRow {
    std::string contender;
    std::string mode; ///< "parked" or "spinning"
    int samples = 0;
    double p50_us = 0, p99_us = 0, p999_us = 0, mean_us = 0, max_us = 0;
    PoolCounters counters;
};

struct TreeRow {
    std::string contender; ///< "serial" for the one-thread reference
    uint64_t target_tasks = 0;
    uint64_t tasks = 0;
    int max_depth = 0;
    std::vector<double> rates; ///< tasks/s, one per repetition
    double median_rate = 0;
    double best_rate = 0; ///< the fastest repetition: the least disturbed
    PoolCounters counters;
};

struct Results {
    RunInfo run;

    // The plan that was run.
    int64_t tasks_per_submitter = 0;
    int max_submitters = 0;
    int throughput_reps = 0;
    int parked_samples = 0;
    int spinning_samples = 0;
    int parked_gap_us = 0;
    std::vector<int> tree_reps; ///< per tree size

    std::vector<std::string> contenders;
    std::vector<std::string> contender_descriptions;
    std::vector<ThroughputRow> throughput;
    std::vector<LatencyRow> latency;
    std::vector<std::string> latency_skipped; ///< "name: reason"
    /// latency_references: latency rows that are not contenders (variants
    /// run to explain a result, e.g. "pool-ccd-unpinned").
    std::vector<std::string> latency_references;
    std::vector<TreeRow> tree;
    std::vector<Target> targets;
    std::vector<std::string> failures; ///< exactly-once check failures
    double seconds = 0;                ///< the whole run
};

/// to_report: every number of the run, as tables, plots and targets.
Report to_report(const Results& r);

} // namespace bench
