/**
 * ivf_report.h: what one bench_ivf run measured on one data set, the
 * issue's targets judged on it, and its report (common/report.h).
 */

#pragma once

#include "common/report.h"
#include "ivf_contenders.h"
#include "ivf_data.h"
#include "ivf_scan_cost.h"
#include "ivf_scenarios.h"

#include <string>
#include <vector>

namespace bench {
namespace ivf {

/// ScenarioRow: one contender in one scenario, over all rounds.
struct ScenarioRow {
    std::string scenario; ///< "single", "clients" or "batch"
    std::string contender;
    std::vector<RunResult> rounds;
    int reruns =
            0; ///< noisy blocks measured again    // Medians over the rounds.
    double qps = 0;
    double p50 = 0, p99 = 0, p999 = 0;
    double own_cpu = -1, other_cpu = -1; ///< machine shares (RunResult)
    /// recall@10 over the answered queries that have ground truth (first
    /// round's answers); -1 when none has.
    double recall10 = -1;
    size_t recall_queries = 0;
    /// Against stock-pm0's answers in the same scenario (pool contenders
    /// and stock-pm1); compared = false for stock-pm0 itself.
    bool compared = false;
    Mismatch mismatch;
    // Pool counters summed over the rounds.
    bool has_pool = false;
    uint64_t tasks = 0, local_pops = 0, intra_steals = 0, cross_steals = 0,
             parks = 0;
    double cross_steal_ratio = 0;
    double tasks_per_query = 0;
    std::vector<uint64_t> tasks_per_ccd;

    /// finalize: medians and pool sums from `rounds`.
    void finalize();
};

struct DatasetResults {
    // The run.
    RunInfo run;
    int max_workers_per_ccd = 0; ///< 1: no CCD siblings to steal from

    // The data set.
    std::string dataset, description;
    int d = 0, k = 0;
    size_t nb = 0, nlist = 0, nprobe = 0, nq_loaded = 0;
    bool index_from_cache = false;
    std::string cache_file;
    double build_seconds = 0, gt_seconds = 0;
    ListStats lists;
    double recall10_all = -1; ///< stock-pm0 batch over every GT query
    size_t recall10_all_queries = 0;

    // The plan.
    int rounds = 0, nclients = 0;
    int single_blocks = 1, clients_blocks = 1; ///< turns per round
    double noisy_share = 0; ///< blocks with more others' CPU are rerun
    int max_reruns = 0;     ///< per block
    double rerun_budget_s = 0;
    double rerun_seconds = 0; ///< spent on discarded noisy blocks
    size_t single_nq = 0, clients_nq = 0, batch_nq = 0;

    std::vector<std::string> contenders, contender_descriptions;
    std::vector<ScenarioRow> rows;
    bool has_split = false;
    SplitAnalysis split; ///< over the single-client queries
    bool has_scan_cost = false;
    ScanCost scan_cost; ///< one-thread scan cost per task decomposition
    std::vector<Target> targets;    ///< judged by judge_targets()
    std::vector<std::string> notes; ///< diagnosis lines for the report

    const ScenarioRow* row(
            const std::string& scenario,
            const std::string& contender) const;
};

/// judge_targets: the targets for each pool contender, with a
/// measured reason for each miss; fills r->targets and r->notes.
void judge_targets(DatasetResults* r);

/// to_report: every number of the run (each round's too) as tables, plots
/// and targets; ivf_<dataset>.json.
Report to_report(const DatasetResults& r);

} // namespace ivf
} // namespace bench
