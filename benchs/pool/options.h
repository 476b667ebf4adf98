/**
 * options.h: bench_pool's command line (Options) and the sizes and
 * repetitions it implies (Plan).
 */

#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

struct Options {
    std::string out = "benchs/results";
    bool quick = false;
    int reps = -1; ///< -1: the plan's defaults
    std::string topology;
    std::string command;
};

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

Plan make_plan(const Options& o);
void usage(const char* argv0);
/// parse_args: false on a bad or help argument (after saying why).
bool parse_args(int argc, char** argv, Options* o);

} // namespace bench
