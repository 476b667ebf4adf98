/**
 * IVFScanCost: the measured cost of scanning an IVF index's codes, per
 * table, for the CCD mode's helper plan (ccd::plan_helpers): a scan of c
 * codes is estimated at c * ns_per_code(table), a moving average of what
 * the scans of earlier calls on that table took (all participants, every
 * unit timed). Before a table's first call: kInitialNsPerCodeByte per
 * byte of code, a guess the first call replaces. Scans of one query
 * shared scan by scan are measured apart (split_scan_ns_per_code): their
 * merges into one heap from several cores can cost more than the scans
 * (k = 100 over lists of tens of codes: a split query took longer than
 * the caller alone).
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

#include <faiss/BatchShape.h>

#include <cstddef>
#include <cstdint>

namespace faiss {
namespace ccd {

/// kInitialNsPerCodeByte: the first guess, before anything was measured.
constexpr double kInitialNsPerCodeByte = 0.05;

/// ScanShape: how a call's scans ran, for the estimate it feeds.
///   alone  the caller scanned everything;
///   split  one query's (or a few queries') scans shared scan by scan,
///          every participant merging into the same heaps;
///   other  whole queries per participant (query-major, shared);
///   list_major  list-major units, alone or shared (their own estimate:
///          BatchShape prices list-major with it once measured).
enum class ScanShape { alone, split, other, list_major };

/// scan_ns_per_code: the estimate for `table_id`, whose codes are
/// `code_size` bytes: what alone and `other` calls measured.
double scan_ns_per_code(uint32_t table_id, size_t code_size);

/// list_major_scan_ns_per_code: what list-major calls of `table_id`
/// measured per code (set-ups and merges included), or 0 before any.
double list_major_scan_ns_per_code(uint32_t table_id);

/// split_scan_ns_per_code: the estimate of the same scans shared scan by
/// scan (all participants' time per code, so lock waits on the shared
/// heaps and their cache lines passing between cores count). Before any
/// split call, scan_ns_per_code. Each alone call moves it 1/32 of the way
/// back toward scan_ns_per_code, so a split that once measured dear is
/// tried again after some tens of calls and re-measured: conditions (a
/// busy neighbour, cold caches) change, and an estimate never measured
/// again would never learn it.
double split_scan_ns_per_code(uint32_t table_id, size_t code_size);

/// note_scan_cost: `codes` codes of `table_id` took `ns` in all, run as
/// `shape`; `fresh`: the call ran its shape to measure it (BatchShape's
/// ShapeChoice::explore), whose sample replaces the estimate.
void note_scan_cost(
        uint32_t table_id,
        double ns,
        double codes,
        ScanShape shape = ScanShape::other,
        bool fresh = false);

/// TermSample: what one participant's timed items took (one item in
/// kTermSampleEvery is timed part by part; BatchShape.h's terms).
struct TermSample {
    double set_query_ns = 0, set_queries = 0;
    double set_list_ns = 0, set_lists = 0;
    double merge_ns = 0, merges = 0; ///< merges: timed items
};

/// kTermSampleEvery: a participant times one item in this many (and its
/// first), so that the clock's cost (tens of ns a read) stays off small
/// lists' scans.
constexpr unsigned kTermSampleEvery = 16;

/// scan_terms: the measured terms of `table_id` for BatchShape: code_ns
/// is scan_ns_per_code, code_list_major_ns list_major_scan_ns_per_code
/// once query-major was measured too, else 0 (whole units timed: every
/// cost of the shape included); set-up and merge
/// terms are 0 before any measure of theirs. Those are measured on a table's
/// first call (the caller times its first queries' set-up before planning),
/// then kept fresh by every call's timed items (moving averages, as
/// scan_ns_per_code).
ScanTerms scan_terms(uint32_t table_id, size_t code_size);

/// coarse_ns_per_query: what `table_id`'s quantizer took per query (all
/// slices' time), or 0 before its first CCD-mode call.
double coarse_ns_per_query(uint32_t table_id);

/// note_coarse_cost: `queries` queries of `table_id` took `ns` to quantize.
void note_coarse_cost(uint32_t table_id, double ns, double queries);

/// priced_call: `table_id`'s history for BatchShape's choose_list_major,
/// this call counted in it (racing callers may count once for two).
ShapeHistory priced_call(uint32_t table_id);

/// has_setup_terms: whether `table_id`'s set-up costs were measured.
bool has_setup_terms(uint32_t table_id);

/// note_scan_terms: a participant's sample.
void note_scan_terms(uint32_t table_id, const TermSample& sample);

/// IVFSearchCCDStats: counters of the CCD mode's searches.
struct IVFSearchCCDStats {
    size_t calls = 0;              ///< search / range_search scan phases
    size_t inline_calls = 0;       ///< ...that ran in the caller alone
    size_t list_major_calls = 0;   ///< ...that scanned list-major
    size_t units = 0;              ///< scan units (list chunk x queries)
    size_t units_by_caller = 0;    ///< ...run in the calling thread
    size_t helpers = 0;            ///< helper tasks submitted
    size_t helpers_with_units = 0; ///< ...that scanned something
    double estimated_ms = 0;       ///< sum of the calls' estimated scan times
    double scan_ms = 0;            ///< sum of their measured scan times
    size_t coarse_slices = 0;      ///< quantizer slices shared with helpers

    void reset();
};

/// ivf_ccd_stats: summed over every CCD-mode IVF search of the process.
extern IVFSearchCCDStats ivf_ccd_stats;

} // namespace ccd
} // namespace faiss
