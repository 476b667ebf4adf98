/**
 * IndexIVFCCD: IVF search whose probed-list scans run on a CCD-aware Pool
 * instead of FAISS's `#pragma omp for schedule(dynamic)`.
 *
 * It wraps an existing faiss::IndexIVF (not owned unless own_fields is set)
 * and shares a Pool with any number of other indexes and client threads.
 * Each (query, list) scan is a task keyed by MappingId(table_id, list_no),
 * so all scans of one list run on the CCD whose L3 holds that list. Results
 * equal the wrapped index's own search(): same distances, same labels
 * except among exactly tied distances, -1 labels when fewer than k
 * candidates.
 *
 * Per search call:
 *   1. coarse quantization once for the batch, in the calling thread, as
 *      IndexIVF::search does it (FAISS's OpenMP held to one thread, so many
 *      clients never oversubscribe the machine);
 *   2. scan tasks: query-major (one task per query and probed list) or
 *      list-major (one task per probed list, scanning it for every query of
 *      the batch that probes it, while the list is in cache); lists larger
 *      than split_factor times the average list are split into chunks that
 *      keep the list's MappingId, so one hot list cannot stall a query;
 *   3. each task scans into its own top-k heap with its own
 *      InvertedListScanner, then merges into the query's heap under a
 *      per-query lock; the heaps are sorted at the end.
 *
 * Indexes without InvertedListScanner (the FastScan family): search and
 * range_search fall back to the wrapped index's own search (FAISS's OpenMP).
 * So do indexes whose search_preassigned does more than scan (IndexIVFPQR
 * re-ranks, IndexIVFFlatDedup adds duplicates), searches of an empty index
 * (-1 labels, as FAISS answers), with max_codes set, or with an IDSelector
 * in the params.
 *
 * Thread contract: search() and range_search() from any number of threads
 * at once. add(), train(), reset() forward to the wrapped index and, as in
 * FAISS, must not run concurrently with searches.
 */

#pragma once

#include <faiss/IndexIVF.h>
#include <faiss/ccd_scheduler/MappingId.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/TrafficSink.h>

#include <memory>

namespace faiss {
namespace ccd {

struct IndexIVFCCD : Index {
    IndexIVF* index;  ///< the wrapped index
    bool own_fields;  ///< delete `index` in the destructor
    uint32_t table_id; ///< high half of this index's MappingIds

    /// Lists longer than split_factor * (ntotal / nlist) are scanned in
    /// chunks of about chunk_factor * (ntotal / nlist) codes (at least
    /// min_chunk). 0 disables splitting.
    double split_factor = 4.0;
    double chunk_factor = 2.0;
    size_t min_chunk = 512;

    /// Batches of at least this many queries are scanned list-major.
    idx_t list_major_min_batch = 64;

    /// Receives (MappingId, vectors scanned, bytes) for every scan task; may
    /// be null. Not owned.
    TrafficSink* traffic_sink = nullptr;

    /// IndexIVFCCD: `index` must be trained before searching; `pool` is
    /// held weakly: searching after the pool is gone is an error.
    IndexIVFCCD(
            IndexIVF* index,
            std::shared_ptr<Pool> pool,
            uint32_t table_id = 0,
            bool own_fields = false);
    ~IndexIVFCCD() override;

    /// uses_scanners: false when every search falls back to the wrapped
    /// index (no scanner, or a search_preassigned of its own).
    bool uses_scanners() const {
        return has_scanner_;
    }

    void search(
            idx_t n,
            const float* x,
            idx_t k,
            float* distances,
            idx_t* labels,
            const SearchParameters* params = nullptr) const override;

    void range_search(
            idx_t n,
            const float* x,
            float radius,
            RangeSearchResult* result,
            const SearchParameters* params = nullptr) const override;

    void train(idx_t n, const float* x) override;
    void add(idx_t n, const float* x) override;
    void add_with_ids(idx_t n, const float* x, const idx_t* xids) override;
    void reset() override;
    void reconstruct(idx_t key, float* recons) const override;

    /// pool: the pool, or a FaissException if it is gone.
    std::shared_ptr<Pool> pool() const;

   private:
    void sync_from_index();
    size_t effective_nprobe(const SearchParameters* params) const;
    bool must_fall_back(const SearchParameters* params) const;
    void coarse_quantize(
            idx_t n,
            const float* x,
            size_t nprobe,
            float* coarse_dis,
            idx_t* assign) const;

    std::weak_ptr<Pool> pool_;
    bool has_scanner_ = false;
};

} // namespace ccd
} // namespace faiss
