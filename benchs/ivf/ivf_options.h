/**
 * ivf_options.h: bench_ivf's command line (Settings) and the sizes of one
 * data set's run (Plan).
 */

#pragma once

#include <cstddef>
#include <string>

namespace bench {
namespace ivf {

struct Settings {
    std::string out = "benchs/out"; ///< --out: the results directory
    bool quick = false;
    std::string dataset = "both";
    size_t nb = 0;  ///< 0: the plan's default
    int rounds = 0; ///< 0: the plan's default
    std::string topology;
    std::string lists_out; ///< write <name>.lists there and stop
    std::string command;
};

/// Plan: the sizes of one data set's run. Default, on a quiet 2-core
/// machine with cached indexes: about 3.5 min for the synthetic set and
/// 1.5 min for Fashion-MNIST (building both indexes and their ground truth
/// adds ~40 s once); --quick: a few seconds each. P999 wants >= 2000
/// samples per round to be more than the maximum.
struct Plan {
    int rounds = 2;
    int nclients = 8;
    size_t single_nq = 2000;
    size_t clients_nq = 2000;
    size_t batch_nq = 4000;
    size_t gt_nq = 2000;       ///< queries with exact ground truth
    size_t scan_cost_nq = 200; ///< queries of the one-thread scan-cost probe
    /// A round of the single and clients scenarios is measured in blocks,
    /// contenders taking turns block by block (finer interleaving against
    /// noise from other work on the machine).
    int single_blocks = 8;
    int clients_blocks = 4;
    /// A block during which other work took more than noisy_share of the
    /// machine is measured again, at most max_reruns times, while the
    /// data set's reruns stay under rerun_budget_s seconds. Blocks shorter
    /// than min_judged_s are never judged (/proc/stat counts 10 ms ticks).
    double noisy_share = 0.15;
    int max_reruns = 2;
    double rerun_budget_s = 60;
    double min_judged_s = 0.5;
    int k = 100;
};

/// make_plan: the plan for one data set ("synthetic" or "fmnist").
Plan make_plan(const Settings& o, const std::string& dataset);

/// parse_args: fills `o` (o->command: the command line, shell-quoted);
/// false on a bad argument or --help (then *help is true).
bool parse_args(int argc, char** argv, Settings* o, bool* help);

} // namespace ivf
} // namespace bench
