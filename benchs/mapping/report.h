/**
 * report.h: what bench_mapping measured, and its report (every number,
 * per-second series included, as tables, plots and targets:
 * common/report.h).
 */

#pragma once

#include "common/report.h"
#include "costs.h"
#include "drift.h"

#include <string>
#include <vector>

namespace bench {
namespace mapping {

/// Plan: sizes. Default: about 1-2 minutes on a 2-core machine; --quick:
/// under 30 s (the ctest smoke test).
struct Plan {
    std::vector<std::string> topologies = {"4x2", "12x8"};
    DriftPlan drift;
    BuildPlan build;
    SubmitPlan submit;
};

/// Run: everything one invocation measured, and how it was invoked.
struct Run {
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

/// to_report: the run's tables, plots and targets.
Report to_report(const Run& run);

} // namespace mapping
} // namespace bench
