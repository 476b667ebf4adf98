/**
 * IVFSearchCCD: the scans of an IVF search as tasks on a CCD-aware Pool, in
 * place of FAISS's `#pragma omp for schedule(dynamic)`. The one
 * implementation of the scan orchestration: IndexIVFCCD calls it.
 *
 * Given the coarse assignment of a batch (`keys`, `coarse_dis`: nprobe lists
 * per query, as IndexIVF::search_preassigned takes them), every (query,
 * probed list) becomes a scan of the list's codes; lists longer than
 * split_factor times the average are cut in chunks. Scans become tasks
 * keyed by MappingId(table_id, list_no), so all scans of one list run on
 * the CCD whose L3 holds it:
 *   - query-major (small batches): one task per scan;
 *   - list-major (batches of at least list_major_min_batch queries): one
 *     task per list chunk and group of up to 32 queries probing it, which
 *     scan it while its codes are in cache.
 * k-NN tasks scan into their own top-k heap, seeded with the query's
 * current k-th distance, with their own InvertedListScanner, then merge
 * into the query's heap under a per-query lock. Range tasks append their
 * hits to the query's list. Each task reports (MappingId, vectors scanned,
 * bytes) to the traffic sink. Results equal IndexIVF's own scan: same
 * distances, same labels except among exactly tied distances.
 *
 * Thread contract: any number of searches at once, from any threads,
 * including tasks of the pool (the caller's wait helps the pool).
 */

#pragma once

#include <faiss/IndexIVF.h>
#include <faiss/ccd_scheduler/MappingId.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/TrafficSink.h>

#include <cstddef>

namespace faiss {
struct RangeSearchResult;

namespace ccd {

/// SearchParametersIVFCCD: the per-call knobs of the CCD search, beside
/// SearchParametersIVF's. IndexIVFCCD's fields of the same names are the
/// defaults when a search gets no such parameters.
struct SearchParametersIVFCCD : SearchParametersIVF {
    /// Lists longer than split_factor * (ntotal / nlist) are scanned in
    /// chunks of about chunk_factor * (ntotal / nlist) codes (at least
    /// min_chunk). 0 disables splitting.
    double split_factor = 4.0;
    double chunk_factor = 2.0;
    size_t min_chunk = 512;
    /// Batches of at least this many queries are scanned list-major.
    Index::idx_t list_major_min_batch = 64;
};

/// IVFScanTarget: where the scans of one index run and what they report.
struct IVFScanTarget {
    Pool* pool;
    uint32_t table_id; ///< high half of the tasks' MappingIds
    TrafficSink* sink; ///< may be null
};

/// ccd_supports_index: whether the CCD scans can answer searches of this
/// index exactly. False (FAISS's own search must run) for indexes without
/// an InvertedListScanner (the FastScan family) and those whose
/// search_preassigned does more than scan (IndexIVFPQR re-ranks,
/// IndexIVFFlatDedup adds the duplicates). Makes a scanner: not per call.
bool ccd_supports_index(const IndexIVF& ivf);

/// ccd_supports_params: whether a search of a supported index with these
/// parameters can be: not with max_codes set, nor with an IDSelector.
bool ccd_supports_params(
        const IndexIVF& ivf,
        const SearchParametersIVF* params);

/// search_ccd: IndexIVF::search through the pool: the coarse quantizer
/// once for the whole batch in the calling thread (OpenMP held to one
/// thread; params->quantizer_params passed on), then
/// search_preassigned_ccd.
void search_ccd(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        Index::idx_t n,
        const float* x,
        Index::idx_t k,
        float* distances,
        Index::idx_t* labels,
        const SearchParametersIVF* params);

/// range_search_ccd: IndexIVF::range_search through the pool, likewise.
void range_search_ccd(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        Index::idx_t n,
        const float* x,
        float radius,
        RangeSearchResult* result,
        const SearchParametersIVF* params);

/// search_preassigned_ccd: the k-NN scans of n queries. distances and
/// labels (n * k) are overwritten, sorted best first, -1 labels past the
/// last result. `params` may be null (the index's nprobe).
void search_preassigned_ccd(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        Index::idx_t n,
        const float* x,
        Index::idx_t k,
        const Index::idx_t* keys,
        const float* coarse_dis,
        float* distances,
        Index::idx_t* labels,
        const SearchParametersIVF* params);

/// range_search_preassigned_ccd: the range scans of n queries into
/// `result` (result->nq == n; lims, distances and labels are filled).
void range_search_preassigned_ccd(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        Index::idx_t n,
        const float* x,
        float radius,
        const Index::idx_t* keys,
        const float* coarse_dis,
        RangeSearchResult* result,
        const SearchParametersIVF* params);

} // namespace ccd
} // namespace faiss
