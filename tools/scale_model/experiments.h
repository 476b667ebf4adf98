/**
 * experiments: what bench_sim runs and how it turns the runs into one
 * report (common/report.h): the scaling sweep (throughput against enabled CCDs,
 * every variant, each part), the workloads at full width (IVF synthetic
 * and Fashion-MNIST, steady and drifting; HNSW skewed, steady and
 * drifting), the cross-CCD threshold and monitor-window sweeps behind
 * V3's defaults, and the targets, met or missed.
 */

#pragma once

#include "common/report.h"
#include "simulator.h"

#include <string>
#include <vector>

namespace sim {

using bench::Cell;
using bench::Plot;
using bench::Report;
using bench::Series;
using bench::Table;
using bench::Target;

struct Options {
    std::vector<std::string> parts = {"genoa96", "rome48"};
    std::string data_dir;    ///< tools/scale_model/data
    std::string calibration; ///< tools/scale_model/calibration.json ("" = none)
    ScanCosts costs;         ///< after the file and the overrides
    double l3_ns_per_byte = -1, dram_ns_per_byte = -1, task_overhead_ns = -1;
    uint32_t ivf_block_bytes = 65536;
    double warmup_s = 1.0;
    double measure_s = 1.0;
    double drift_rotate_s = 5;
    double drift_measure_s = 12;
    bool quick = false;
    bool sweeps = true;
    uint64_t seed = 1;
    std::string command;
};

/// build_report: run everything the options ask for. `progress` (may be
/// null) gets one line per run.
Report build_report(const Options& options, FILE* progress);

/// build_host_report: the validation's predictions (benchmark "sim_host"):
/// the model of this machine (part "host" of the calibration) replays
/// bench_ivf's own indexes and queries (data/bench_ivf/*.lists, written by
/// bench_ivf --lists-out) with bench_ivf's client counts, V0 / V1 / V2.
/// tools/scale_model/validate.py sets them beside bench_ivf's measurements.
Report build_host_report(const Options& options, FILE* progress);

} // namespace sim
