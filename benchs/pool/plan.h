/**
 * plan.h: the sizes and repetitions of one bench_pool run.
 */

#pragma once

#include <cstdint>
#include <vector>

namespace bench {

/// Plan: sizes and repetitions. Default: about 2-3 minutes on a 2-core
/// machine; --quick: about 20 s (the ctest smoke test).
struct Plan {
    int64_t tasks_per_submitter;
    int max_submitters = 4;
    int throughput_reps;
    int parked_samples;
    int spinning_samples;
    int parked_gap_us = 2000;
    std::vector<uint64_t> tree_targets;
    std::vector<int> tree_reps;
};

/// make_plan: `reps` > 0 overrides every measurement's repetitions.
Plan make_plan(bool quick, int reps);

} // namespace bench
