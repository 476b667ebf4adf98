/**
 * IVFSearchCCD: the scans of an IVF search as tasks on a CCD-aware Pool, in
 * place of FAISS's `#pragma omp for schedule(dynamic)`. The one
 * implementation of the scan orchestration: the fork's IndexIVF calls it in
 * PARALLEL_MODE_CCD (faiss/patches/), and IndexIVFCCD goes through that.
 *
 * How IndexIVF reaches it. IndexIVF::search and range_search, when the
 * CCD mode is asked for (the index's parallel_mode, or a
 * SearchParametersIVFCCD) and the scans can answer the call exactly
 * (uses_ccd_mode), call ivf_search / ivf_range_search: the coarse
 * quantizer runs once for the whole batch in the calling thread, then the
 * index's own (virtual) search_preassigned, so subclasses that re-rank
 * (IndexIVFPQR) or add duplicates (IndexIVFFlatDedup) keep doing so.
 * IndexIVF::search_preassigned and range_search_preassigned call
 * ivf_search_preassigned / ivf_range_search_preassigned, which run the
 * scans on the pool. Calls the scans cannot answer exactly (no
 * InvertedListScanner, or max_codes together with a sorted
 * IDSelectorRange) run FAISS's own search instead, as parallel_mode 0;
 * calls FAISS's own loops would abort on (an unsupported mode, a range
 * search without a scanner) throw a FaissException.
 *
 * The scans. Every (query, probed list) is a scan of the list's codes;
 * lists longer than split_factor times the average are cut in chunks (not
 * with store_pairs, whose labels are offsets in the list). Scans become
 * tasks keyed by MappingId(table_id, list_no), so all scans of one list run
 * on the CCD whose L3 holds it:
 *   - query-major (small batches): one task per scan;
 *   - list-major (batches of at least list_major_min_batch queries; by
 *     default from 64 queries when BatchShape.h prices it cheaper with the
 *     index's measured costs, set_query calls included): one task per
 *     list chunk and group of up to 32 queries probing it, which scan it
 *     while its codes are in cache.
 * k-NN tasks scan into their own top-k heap, seeded with the query's
 * current k-th distance, with their own InvertedListScanner, then merge
 * into the query's heap under a per-query lock. Range tasks keep their
 * hits apart, concatenated in scan order at the end (FAISS's order). Each
 * task reports (MappingId, vectors scanned, bytes) to the traffic sink.
 * max_codes is honoured as FAISS does it (a query's probes, in order, until
 * the lists scanned hold max_codes codes); IDSelectors and store_pairs go to
 * the scanners. Results equal FAISS's own: same distances, same labels
 * except among exactly tied distances.
 *
 * Where a call goes: faiss/IVFSearchCCD.cpp, the entry points below,
 * resolves it once; then faiss/ivf_ccd/, one concept a file:
 *   ResolvedCall.h         the call: index, knobs, runtime, table id, sink,
 *                          its one CallerScope, the scanner factory
 *   CoarseAssignment.h     the quantizer, in the caller or in slices
 *   ScanPlan.h             the batch's shape: alone or shared, list- or
 *                          query-major (priced by BatchShape.h, from the
 *                          costs IVFScanCost.h measures), its grain
 *   ScanShare.h            the scans as units on the pool, grouped by CCD,
 *                          helpers planned (ccd_scheduler/HelperPlan.h)
 *   KnnScan.cpp, RangeScan.cpp   what one scan does
 *   ParallelMode.cpp       default and valid modes, FallbackTeam
 *
 * Interrupts: InterruptCallback is asked once per call, in the calling
 * thread, after the scans (pool workers never take the Python GIL).
 *
 * Thread contract: any number of searches at once, from any threads,
 * including tasks of the pool (the caller's wait helps the pool).
 */

#pragma once

#include <faiss/IndexIVF.h>
#include <faiss/ccd_scheduler/MappingId.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/ccd_scheduler/TrafficSink.h>

#include <cstddef>
#include <cstdint>

namespace faiss {
struct RangeSearchResult;

namespace ccd {

/// SearchParametersIVFCCD: a search through the CCD pool, whatever the
/// index's parallel_mode, with these per-call knobs beside
/// SearchParametersIVF's. IndexIVFCCD's fields of the same names are the
/// defaults of its searches.
struct SearchParametersIVFCCD : SearchParametersIVF {
    /// Lists longer than split_factor * (ntotal / nlist) are scanned in
    /// chunks of about chunk_factor * (ntotal / nlist) codes (at least
    /// min_chunk). 0 disables splitting.
    double split_factor = 4.0;
    double chunk_factor = 2.0;
    size_t min_chunk = 512;
    /// Batches of at least this many queries are scanned list-major; -1:
    /// from 64 queries, when list-major is priced cheaper than query-major
    /// (BatchShape.h: the index's measured cost per code of each shape,
    /// and before list-major ever ran, the set_query calls it adds against
    /// the cache it saves).
    Index::idx_t list_major_min_batch = -1;
    /// Pool workers that help the calling thread scan, per CCD holding
    /// probed lists: -1 = as many as the measured costs pay for
    /// (ccd::plan_helpers: none for a small search or a busy pool);
    /// 0 = the calling thread scans alone; n > 0 = n per CCD.
    int helpers = -1;
    /// Where the scans run: nullptr = Runtime::get_default(). Not owned:
    /// it must outlive the call.
    Runtime* runtime = nullptr;
    /// High half of the tasks' MappingIds; -1 = derived from the address
    /// of the index's inverted lists (the memory the tasks touch).
    int64_t table_id = -1;
    /// Receives the tasks' traffic; nullptr = the runtime's monitor.
    TrafficSink* traffic_sink = nullptr;
};

/// default_parallel_mode: the parallel_mode new IndexIVF objects start
/// with: set_default_parallel_mode's, else FAISS_CCD_PARALLEL_MODE's ("ccd"
/// or a number, read once), else 0.
int default_parallel_mode();
/// set_default_parallel_mode: for IVF indexes made or loaded from now on
/// (index_factory, read_index, constructors). Throws on a mode that
/// IndexIVF does not support.
void set_default_parallel_mode(int mode);

/// check_parallel_mode: throws a FaissException naming `mode` unless it is
/// 0-3 or PARALLEL_MODE_CCD, optionally or-ed with
/// PARALLEL_MODE_NO_HEAP_INIT.
void check_parallel_mode(int mode);

/// stock_parallel_mode: `mode` without the CCD bit, for FAISS's own loops
/// when the CCD mode falls back (they then run as mode 0).
inline int stock_parallel_mode(int mode) {
    return mode & ~PARALLEL_MODE_CCD;
}

/// FallbackTeam: while alive, FAISS's OpenMP regions started from the
/// calling thread have at most max(1, n) threads, when `ccd` (the CCD
/// mode was asked for); otherwise it does nothing. For the parts of a
/// CCD-mode call that run FAISS's own loops (the FastScan family, which
/// has no scanner for the pool; IVFPQR's refinement): those loops go over
/// the call's n queries, so threads past n have nothing to do, yet each
/// region wakes them. With n >= omp_get_max_threads() it changes nothing.
/// Thread contract: the calling thread's setting only (OpenMP's count is
/// per thread); restored on destruction, in that thread.
class FallbackTeam {
   public:
    FallbackTeam(bool ccd, Index::idx_t n);
    ~FallbackTeam();
    FallbackTeam(const FallbackTeam&) = delete;
    FallbackTeam& operator=(const FallbackTeam&) = delete;

   private:
    int saved_ = 0; ///< the thread's count before, 0: left untouched
};

/// uses_ccd_mode: whether a search of `ivf` with `params` goes through the
/// pool: the CCD mode is asked for and the scans can answer exactly. Throws
/// on an unsupported parallel_mode (FAISS would abort inside an OpenMP
/// region).
bool uses_ccd_mode(const IndexIVF& ivf, const SearchParametersIVF* params);

/// table_id_of: the table id of an index without one of its own: a hash
/// of the address of its inverted lists.
uint32_t table_id_of(const IndexIVF& ivf);

/// ivf_search: IndexIVF::search in the CCD mode.
void ivf_search(
        const IndexIVF& ivf,
        Index::idx_t n,
        const float* x,
        Index::idx_t k,
        float* distances,
        Index::idx_t* labels,
        const SearchParametersIVF* params);

/// ivf_range_search: IndexIVF::range_search in the CCD mode.
void ivf_range_search(
        const IndexIVF& ivf,
        Index::idx_t n,
        const float* x,
        float radius,
        RangeSearchResult* result,
        const SearchParametersIVF* params);

/// ivf_search_preassigned: IndexIVF::search_preassigned's scans on the
/// pool. False, having done nothing, when the call is not in the CCD mode
/// or the scans cannot answer it exactly: FAISS's own loop then runs.
bool ivf_search_preassigned(
        const IndexIVF& ivf,
        Index::idx_t n,
        const float* x,
        Index::idx_t k,
        const Index::idx_t* keys,
        const float* coarse_dis,
        float* distances,
        Index::idx_t* labels,
        bool store_pairs,
        const SearchParametersIVF* params,
        IndexIVFStats* stats);

/// ivf_range_search_preassigned: IndexIVF::range_search_preassigned's
/// scans on the pool, likewise. Throws for a call FAISS's own range loop
/// would abort on (parallel_mode 3 or with PARALLEL_MODE_NO_HEAP_INIT, an
/// index without an InvertedListScanner).
bool ivf_range_search_preassigned(
        const IndexIVF& ivf,
        Index::idx_t n,
        const float* x,
        float radius,
        const Index::idx_t* keys,
        const float* coarse_dis,
        RangeSearchResult* result,
        bool store_pairs,
        const SearchParametersIVF* params,
        IndexIVFStats* stats);

} // namespace ccd
} // namespace faiss
