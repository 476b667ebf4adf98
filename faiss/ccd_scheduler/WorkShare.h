/**
 * WorkShare: a calling thread runs units of work itself while helpers on
 * the pool take units of the same work; the call returns when every unit
 * has run. The caller starts at once, in its own thread (no wake-up round
 * trip before the first unit), and never waits for a helper to start: a
 * helper that starts late finds nothing left and goes. Completion never
 * depends on the pool, so a share is safe from any thread, a task of the
 * pool included, whatever the pool is doing.
 *
 * Groups. The units are numbered 0..n-1 and cut in groups, one per CCD
 * whose L3 their memory should stay in; each group has its own cursor.
 * Its helpers are pool tasks keyed by the group's MappingId, so they run
 * on that CCD and take units of that group only. The caller takes units
 * from its own group first (the one on its CCD, `caller_first`), then from
 * the others in order. How many helpers each group gets is the caller's
 * policy (HelperPlan.h).
 *
 * Runners. Each participant (the caller, each helper that gets a unit)
 * makes one UnitRunner with the factory, on its first unit, and runs all
 * its units with it (a scanner and its buffers, made once). A runner is
 * destroyed before its participant reports its last unit done.
 *
 * Lifetime. A unit is claimed (one fetch_add on the group's cursor), run,
 * then counted done; the call returns once all are done. The caller's
 * objects (the factory, what units write to) are touched only between a
 * claim and its done, so never after the call returned. What helpers
 * touch after that (cursors, the done count, the wake-up word) lives in a
 * shared state that the last of them frees.
 *
 * Exceptions: the first one a unit (or a factory) throws is kept, later
 * units are skipped (counted done without running), and run_shared
 * rethrows it on the caller.
 *
 * Waking the caller. `remaining` counts units not yet done; the caller,
 * once it finds no unit left to claim, spins on it, then sleeps on
 * `sleeping`:
 *   C1  sleeping = 1                  seq_cst store
 *   C2  remaining == 0 ? return       seq_cst load
 *   C3  futex_wait(sleeping, 1)
 * and the participant whose done takes `remaining` to zero:
 *   D1  remaining -= 1 (reads 1)      seq_cst RMW
 *   D2  if exchange(sleeping, 0) == 1: futex_wake
 * In the total order either C1 precedes D2 (D2 sees 1 and wakes) or D1
 * precedes C2 (C2 sees 0): no lost wake-up.
 *
 * Thread contract: run_shared from any thread, concurrently, including
 * tasks of the pool (a nested share waits only for units already running,
 * never for a helper to be scheduled). Units may themselves run shares.
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace faiss {
namespace ccd {

class Pool;

/// UnitRunner: runs units for one participant.
class UnitRunner {
   public:
    virtual ~UnitRunner() = default;
    virtual void run(int64_t unit) = 0;
};

/// RunnerFactory: makes one runner per participant; called from the
/// caller and from helpers, concurrently.
class RunnerFactory {
   public:
    virtual std::unique_ptr<UnitRunner> make_runner() const = 0;

   protected:
    ~RunnerFactory() = default;
};

/// ShareGroup: units [begin, end), helped by `helpers` tasks keyed by `id`
/// (at most one per unit and one per pool worker are submitted).
struct ShareGroup {
    MappingId id = kLocalMappingId;
    int64_t begin = 0;
    int64_t end = 0;
    int helpers = 0;
};

/// ShareStats: what became of one share (the shapes the policy chose).
struct ShareStats {
    int64_t units = 0;
    int64_t units_by_caller = 0;
    int helpers_submitted = 0;
    int helpers_with_units = 0; ///< helpers that ran at least one unit
};

/// run_shared: run every unit of `groups` once, in the caller and in the
/// helpers, and return when all are done; rethrows the first exception a
/// unit threw. The caller takes from groups[caller_first] first.
ShareStats run_shared(
        Pool& pool,
        const std::vector<ShareGroup>& groups,
        int caller_first,
        const RunnerFactory& factory);

} // namespace ccd
} // namespace faiss
