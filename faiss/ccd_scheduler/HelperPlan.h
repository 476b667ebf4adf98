/**
 * HelperPlan: how many pool workers should help a calling thread with a
 * piece of work it can also run alone (WorkShare), as a pure function of
 * measured costs. Policy only: no threads, no clock, no pool; the
 * simulator and the unit tests call it as the library does.
 *
 * The work comes in groups, one per CCD whose L3 its memory should stay
 * in. A helper costs `handoff_ns` before it does anything (the pool's
 * measured submit-to-start delay: a wake-up, or the queue ahead of it),
 * so it pays only when its share of the work is worth several of those;
 * and a core already busy with another caller's work gains nothing from
 * a helper beside it.
 *
 *   payback   = kPaybackFactor * handoff_ns
 *   total < payback                     -> no helper: the caller runs all
 *   spare     = num_workers - other_callers - 1 (the caller's own core)
 *   want[g]   = floor(work_ns[g] / payback), at most the CCD's workers
 *               (minus one on the caller's own CCD, the caller's core),
 *               and at most the group's units (minus the caller's one)
 *   helpers   = want, cut to `spare` in total, the largest groups served
 *               first.
 *
 * Thread contract: a pure function, any thread.
 */

#pragma once

#include <cstdint>
#include <vector>

namespace faiss {
namespace ccd {

/// HelperPlanInput: what plan_helpers needs, all measured or known.
struct HelperPlanInput {
    std::vector<double> work_ns;  ///< per group: estimated run time alone
    std::vector<int> group_ccd;   ///< per group: its CCD, or -1 (any)
    std::vector<int> ccd_workers; ///< per CCD: its number of workers
    int caller_ccd = -1;          ///< the caller's CCD, or -1 (unknown)
    int other_callers = 0;        ///< other threads running such work now
    double handoff_ns = 0;        ///< measured submit-to-start delay
    /// per group: units a participant takes at a time; empty = unbounded.
    /// A group never gets more helpers than units for them (one unit of
    /// the caller's own group is the caller's).
    std::vector<int64_t> units;
};

/// kPaybackFactor: a helper must get this many hand-offs' worth of work.
/// 2: a helper that starts after one hand-off and then shares the work
/// with the caller shortens the call only if its share exceeds the delay;
/// twice leaves room for the estimate's error. A first choice, not tuned.
constexpr double kPaybackFactor = 2.0;

/// plan_helpers: helpers per group (same order as work_ns).
std::vector<int> plan_helpers(const HelperPlanInput& in);

/// helpers_may_pay: whether plan_helpers can give any helper to work of
/// `total_work_ns` in all: false means the caller runs it alone whatever
/// its grouping (a caller may then skip shaping it for helpers).
bool helpers_may_pay(
        double total_work_ns,
        int num_workers,
        int other_callers,
        double handoff_ns);

} // namespace ccd
} // namespace faiss
