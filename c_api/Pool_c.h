/**
 * Pool_c.h: FaissCcdPool, the CCD-aware work-stealing pool
 * (faiss::ccd::Pool): one pinned worker per core, grouped by CCD (the cores
 * that share an L3 cache).
 *
 * Lifetime. Handles built on a pool (FaissCcdIndexIVFCCD,
 * FaissCcdHNSWTables) keep it alive after faiss_ccd_Pool_free; the pool
 * stops when the last of them lets go, after running its pending work.
 *
 * Threads. Every function may be called from any thread, concurrently,
 * except faiss_ccd_Pool_free.
 */

#ifndef FAISS_CCD_POOL_C_H
#define FAISS_CCD_POOL_C_H

#include "faiss_ccd_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/// FaissCcdPoolStats: the pool's counters summed over its workers.
typedef struct FaissCcdPoolStats {
    uint64_t tasks_run;           ///< tasks run
    uint64_t local_pops;          ///< taken from the worker's own queue
    uint64_t intra_ccd_steals;    ///< stolen from a worker of the same CCD
    uint64_t cross_ccd_steals;    ///< stolen from a worker of another CCD
    uint64_t parks;               ///< times a worker went to sleep
    uint64_t uncaught_exceptions; ///< thrown by tasks, dropped by the pool
    double cross_ccd_steal_ratio; ///< cross-CCD steals / all steals (or 0)
    uint64_t mapping_epoch;       ///< placement changes since construction
    int num_workers;
    /// searches the pool served, whether their calling thread scanned alone
    /// or with helper tasks (the CCD mode runs small searches in the caller)
    uint64_t callers;
} FaissCcdPoolStats;

/// FaissCcdWorkerStats: the counters of one worker.
typedef struct FaissCcdWorkerStats {
    int worker;
    int ccd;
    int cpu; ///< the CPU it is pinned to, -1 if not pinned
    uint64_t tasks_run;
    uint64_t local_pops;
    uint64_t intra_ccd_steals;
    uint64_t cross_ccd_steals;
    uint64_t parks;
    uint64_t uncaught_exceptions;
    int64_t queued; ///< tasks waiting in its queue (an estimate)
} FaissCcdWorkerStats;

/**
 * faiss_ccd_Pool_new: start a pool, with the monitor that re-maps its keys
 * to CCDs as the traffic of the indexes searched through it drifts.
 *  topology  NULL, "" or "auto": $FAISS_CCD_TOPOLOGY if set, else
 *            detected (hwloc L3 domains), as Python's Pool("auto");
 *            otherwise a spec: "NxM" (N CCDs of M workers, e.g. "4x2") or
 *            CPU lists per CCD ("0-3;4-7").
 *  policy    NULL or "ccd": CCD-aware stealing; "flat": topology-blind
 *            stealing; "rr": round-robin placement, no stealing.
 * A bad spec or policy name: FAISS_CCD_ERROR_INVALID_ARGUMENT.
 */
int faiss_ccd_Pool_new(
        FaissCcdPool** p_pool,
        const char* topology,
        const char* policy);

int faiss_ccd_Pool_num_workers(const FaissCcdPool* pool, int* p_num_workers);
int faiss_ccd_Pool_num_ccds(const FaissCcdPool* pool, int* p_num_ccds);

/**
 * faiss_ccd_Pool_describe: one line on the topology and the policy, as
 * snprintf writes: at most buf_size - 1 characters and a '\0' (nothing when
 * buf_size is 0, and then buf may be NULL). Returns the length of the whole
 * line (without the '\0'), so a return >= buf_size means it was cut; or a
 * negative error code.
 */
int faiss_ccd_Pool_describe(
        const FaissCcdPool* pool,
        char* buf,
        size_t buf_size);

/// faiss_ccd_Pool_stats: a snapshot of the totals, taken without stopping
/// the pool (counters of different workers are read at slightly different
/// moments).
int faiss_ccd_Pool_stats(const FaissCcdPool* pool, FaissCcdPoolStats* stats);

/// faiss_ccd_Pool_worker_stats: one worker's counters, 0 <= worker <
/// num_workers (else FAISS_CCD_ERROR_INVALID_ARGUMENT).
int faiss_ccd_Pool_worker_stats(
        const FaissCcdPool* pool,
        int worker,
        FaissCcdWorkerStats* stats);

/// faiss_ccd_Pool_wait_idle: block until every task submitted so far (and
/// every task those submitted) has run. Not from a task of the pool.
int faiss_ccd_Pool_wait_idle(const FaissCcdPool* pool);

/// faiss_ccd_Pool_free: drop the handle (see "Lifetime"). When it held the
/// last reference, blocks until the pending work has run and the workers
/// have stopped. NULL: no-op.
void faiss_ccd_Pool_free(FaissCcdPool* pool);

/// faiss_ccd_get_default_pool: a new handle on the process's default pool,
/// the one IVF indexes in FAISS_PARALLEL_MODE_CCD search through (made on
/// first use: $FAISS_CCD_TOPOLOGY, else detected, policy "ccd", with a
/// monitor). Free it with faiss_ccd_Pool_free.
int faiss_ccd_get_default_pool(FaissCcdPool** p_pool);

/// faiss_ccd_set_default_pool: make `pool` the default (NULL: a fresh one
/// on next use). Searches already running finish on the pool they started
/// on; the previous default stops once nothing holds it.
int faiss_ccd_set_default_pool(const FaissCcdPool* pool);

#ifdef __cplusplus
}
#endif

#endif
