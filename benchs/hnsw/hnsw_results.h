/**
 * hnsw_results.h: what one bench_hnsw run measured, the targets
 * judged on it, and its report (common/report.h).
 */

#pragma once

#include "common/report.h"
#include "hnsw/hnsw_workload.h"

#include <faiss/ccd_scheduler/PoolStats.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

/// Run: one contender, one topology, one client count.
struct Run {
    std::string contender; ///< "V0", "V1", "V2", "V2-hash", "stock"
    std::string topology;  ///< the spec ("auto": the real one; "-": none)
    std::string topology_desc;
    int workers = 0;
    int workers_per_ccd = 0;
    int clients = 0;
    uint64_t queries = 0; ///< completed inside the measured window
    double seconds = 0;   ///< the measured window
    double qps = 0;
    double p50_us = 0, p99_us = 0, p999_us = 0, mean_us = 0;
    bool has_pool = false;
    faiss::ccd::PoolStats delta; ///< the pool's counters over the window
    uint64_t cross_steals = 0, intra_steals = 0, tasks = 0, parks = 0;
    double cross_ratio = 0; ///< cross-CCD steals / all steals
    std::vector<uint64_t> tasks_per_ccd;
    size_t remaps = 0; ///< placements the monitor published (V2)
};

struct Results {
    RunInfo run;      ///< topology: the real one (runs also use emulated ones)
    std::string note; ///< from the workload (e.g. no Fashion-MNIST)

    // The plan that was run.
    WorkloadConfig workload;
    std::vector<int> clients;
    std::vector<std::string> topologies;
    double warmup = 0, seconds = 0, zipf = 0;
    int k = 0;
    int64_t threshold = -1; ///< V2's cross-CCD threshold, -1 = CCD size
    size_t checked = 0;     ///< queries checked against stock per contender

    std::vector<TableInfo> tables;
    std::vector<double> weights; ///< share of queries per table
    std::vector<Run> runs;
    std::vector<std::string> failures; ///< answers that differed from stock
};

/// judge: the targets, per topology and client count: V2 QPS >= 1.2x V0,
/// V2 P999 <= 0.5x V0, V2 cross-CCD steal ratio <= 10% with V1's >= 25%
/// (not judged, and left out, with one worker per CCD or one CCD).
std::vector<Target> judge(const Results& res);

/// to_report: every run, table and target.
Report to_report(const Results& res, const std::vector<Target>& targets);

} // namespace bench
