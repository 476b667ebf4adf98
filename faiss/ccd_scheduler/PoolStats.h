/**
 * PoolStats: a snapshot of a pool's counters, taken without stopping it.
 *
 * Each counter is written by one worker only and read with relaxed loads, so
 * a snapshot is a consistent-enough view for monitoring, not an exact cut:
 * counters of different workers may be read at slightly different moments.
 */

#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace faiss {
namespace ccd {

struct WorkerStats {
    int worker = 0;
    int ccd = 0;
    int cpu = -1;                     ///< pinned CPU, -1 = not pinned
    uint64_t tasks_run = 0;           ///< tasks this worker ran
    uint64_t local_pops = 0;          ///< taken from its own queue
    uint64_t intra_ccd_steals = 0;    ///< taken from a worker of its CCD
    uint64_t cross_ccd_steals = 0;    ///< taken from a worker of another CCD
    uint64_t parks = 0;               ///< times it went to sleep
    uint64_t uncaught_exceptions = 0; ///< thrown by tasks without a group
    int64_t queued = 0;               ///< tasks waiting in its queue (estimate)
};

struct PoolStats {
    std::vector<WorkerStats> workers;
    uint64_t mapping_epoch = 0; ///< see Pool::set_mapping
    /// callers: searches (outermost Pool::CallerScopes) the pool served,
    /// whether their calling thread ran them alone or with helpers.
    uint64_t callers = 0;

    uint64_t tasks_run() const;
    uint64_t local_pops() const;
    uint64_t intra_ccd_steals() const;
    uint64_t cross_ccd_steals() const;
    uint64_t parks() const;
    /// tasks_run_per_ccd: tasks run by the workers of each CCD.
    std::vector<uint64_t> tasks_run_per_ccd() const;
    /// cross_ccd_steal_ratio: cross-CCD steals over all steals (0 if none),
    /// the paper's headline locality figure.
    double cross_ccd_steal_ratio() const;

    /// difference: counters accumulated since `earlier` (same pool).
    PoolStats since(const PoolStats& earlier) const;

    /// to_string: one line of totals.
    std::string to_string() const;
};

} // namespace ccd
} // namespace faiss
