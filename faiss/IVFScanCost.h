/**
 * IVFScanCost: the measured cost of scanning an IVF index's codes, per
 * table, for the CCD mode's helper plan (ccd::plan_helpers): a scan of c
 * codes is estimated at c * ns_per_code(table), a moving average of what
 * the scans of earlier calls on that table took (all participants, every
 * unit timed). Before a table's first call: kInitialNsPerCodeByte per
 * byte of code, a guess the first call replaces.
 *
 * A small direct-mapped cache keyed by table id: tables that collide take
 * each other's slot, and the one evicted starts from the guess again.
 *
 * IVFSearchCCDStats: what the CCD mode chose, call by call (the shapes):
 * like FAISS's indexIVF_stats, a process-wide record, summed over calls.
 *
 * Thread contract: any thread; updates are relaxed, racing updates may
 * drop one sample.
 */

#pragma once

#include <cstddef>
#include <cstdint>

namespace faiss {
namespace ccd {

/// kInitialNsPerCodeByte: the first guess, before anything was measured.
constexpr double kInitialNsPerCodeByte = 0.05;

/// scan_ns_per_code: the estimate for `table_id`, whose codes are
/// `code_size` bytes.
double scan_ns_per_code(uint32_t table_id, size_t code_size);

/// note_scan_cost: `codes` codes of `table_id` took `ns` in all.
void note_scan_cost(uint32_t table_id, double ns, double codes);

/// IVFSearchCCDStats: counters of the CCD mode's searches.
struct IVFSearchCCDStats {
    size_t calls = 0;              ///< search / range_search scan phases
    size_t inline_calls = 0;       ///< ...that ran in the caller alone
    size_t units = 0;              ///< scan units (list chunk x queries)
    size_t units_by_caller = 0;    ///< ...run in the calling thread
    size_t helpers = 0;            ///< helper tasks submitted
    size_t helpers_with_units = 0; ///< ...that scanned something
    double estimated_ms = 0;       ///< sum of the calls' estimated scan times
    double scan_ms = 0;            ///< sum of their measured scan times

    void reset();
};

/// ivf_ccd_stats: summed over every CCD-mode IVF search of the process.
extern IVFSearchCCDStats ivf_ccd_stats;

} // namespace ccd
} // namespace faiss
