/**
 * report.h: what bench_mapping measured, as JSON (every number, per-second
 * series included) and as markdown (tables and the targets, met or
 * MISSED).
 */

#pragma once

#include "common/run_info.h"
#include "costs.h"
#include "drift.h"

#include <string>
#include <vector>

namespace bench {
namespace mapping {

/// Options: the command line.
struct Options {
    std::string out = "benchs/results";
    bool quick = false;
    int seconds = -1; ///< -1: the plan's default
    std::string command;
};

/// Plan: sizes. Default: about 1-2 minutes on a 2-core machine; --quick:
/// under 30 s (the ctest smoke test).
struct Plan {
    std::vector<std::string> topologies = {"4x2", "12x8"};
    DriftPlan drift;
    BuildPlan build;
    SubmitPlan submit;
};

/// Target: one target of the issue, evaluated.
struct Target {
    std::string name;
    double value;
    double limit;
    std::string unit;
    std::string note; ///< printed after the value
    bool met() const {
        return value <= limit;
    }
};

/// Run: everything one invocation measured, and how it was invoked.
struct Run {
    Options options;
    Plan plan;
    RunInfo info; ///< topology: the one of the submit path
    std::vector<DriftResult> drift;
    BuildResult build;
    SubmitResult submit;
    std::vector<Target> targets;
    bool consistent = true;
};

/// make_targets: the targets of the issue, from a finished run.
std::vector<Target> make_targets(const Run& run);

std::string to_json(const Run& run);
std::string to_markdown(const Run& run);

} // namespace mapping
} // namespace bench
