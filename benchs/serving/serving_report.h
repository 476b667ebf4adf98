/**
 * serving_report.h: what bench_serving measured and its report: every
 * contender's figures of every measurement as tables, the curves (QPS
 * against clients, P99 against offered load, QPS against batch size, the
 * sweep's ratios against nprobe) and the targets, judged here
 * (common/report.h).
 *
 * "Best stock" is, per measurement, the stock contender fastest in a
 * selection round that is not reported (bench_serving.cpp, take_turns);
 * QPS and latency ratios are against it.
 */

#pragma once

#include "common/report.h"
#include "ivf/ivf_scenarios.h"

#include <faiss/IVFScanCost.h>

#include <string>
#include <vector>

namespace bench {
namespace serving {

/// Measured: one measurement, every contender, median over rounds.
struct Measured {
    std::vector<std::string> names;   ///< the contenders, in lineup order
    std::vector<ivf::RunResult> runs; ///< per contender, the median round's
    std::vector<size_t> mismatches;   ///< queries whose distances differ
    std::vector<double> recall10;     ///< -1 when no ground truth
    size_t queries = 0;
    size_t best_stock = 0; ///< index into runs
    /// The CCD mode's shapes over all its rounds (ivf_ccd_stats deltas).
    faiss::ccd::IVFSearchCCDStats shape;

    /// of: the index of contender `name`, -1 if it did not run.
    int of(const std::string& name) const;
    /// qps_ratio, latency_ratio: `name`'s over the best stock contender's
    /// (NaN where either is missing). latency: 50, 99 or 999.
    double qps_ratio(const std::string& name) const;
    double latency_ratio(const std::string& name, int percentile) const;
};

/// Point: one measurement and where it belongs.
struct Point {
    std::string set;  ///< a data set's name, or a sweep set's label
    std::string part; ///< "closed", "open", "batch" or "sweep"
    int clients = 1;  ///< closed and sweep
    double load = 0;  ///< open: share of the best stock closed-loop QPS
    double rate_qps = 0;
    size_t batch = 0;   ///< batch
    size_t nprobe = 0;  ///< sweep
    double work_ms = 0; ///< one thread's time per query (stock-pm0-t1)
    Measured m;
};

/// SetInfo: one index served.
struct SetInfo {
    std::string name, description, codec;
    int d = 0;
    size_t nb = 0, nlist = 0, nprobe = 0;
    double work_ms = 0;
    double max_stock_qps = 0;            ///< highest best-stock closed-loop QPS
    std::vector<std::string> contenders; ///< "name: description"
};

/// to_report: the report of a run (`budget_s`: seconds per contender per
/// round of a measurement).
Report to_report(
        const RunInfo& run,
        double budget_s,
        const std::vector<SetInfo>& sets,
        const std::vector<Point>& points);

} // namespace serving
} // namespace bench
