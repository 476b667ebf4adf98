/**
 * IndexIVFCCD: an IndexIVF searched through a given Runtime, under a given
 * table id: the explicit form of PARALLEL_MODE_CCD.
 *
 * It wraps an existing faiss::IndexIVF (not owned unless own_fields is set)
 * and shares a Runtime (pool and monitor) with any number of other indexes
 * and client threads. Its searches are the wrapped index's own, given a
 * SearchParametersIVFCCD that names this runtime, this table id, this
 * traffic sink and the task shape below: the fork's IndexIVF then runs the
 * scans as tasks keyed by MappingId(table_id, list_no) (IVFSearchCCD.h),
 * or, where those cannot answer, its own loops (the FastScan family, which
 * has no InvertedListScanner, gets its own search with the caller's
 * parameters). Results equal the wrapped
 * index's own search(): same distances, same labels except among exactly
 * tied distances, -1 labels when fewer than k candidates.
 *
 * Per-call knobs: a SearchParametersIVFCCD (nprobe, max_codes, selector,
 * quantizer parameters and the task shape) or a SearchParametersIVF (the
 * shape from the fields below).
 *
 * Thread contract: search() and range_search() from any number of threads
 * at once. add(), train(), reset() forward to the wrapped index and, as in
 * FAISS, must not run concurrently with searches.
 */

#pragma once

#include <faiss/IVFSearchCCD.h>
#include <faiss/IndexIVF.h>
#include <faiss/ccd_scheduler/Runtime.h>

#include <memory>

namespace faiss {
namespace ccd {

struct IndexIVFCCD : Index {
    IndexIVF* index;   ///< the wrapped index
    bool own_fields;   ///< delete `index` in the destructor
    uint32_t table_id; ///< high half of this index's MappingIds

    /// The task shape when a search gets no SearchParametersIVFCCD (see
    /// there).
    double split_factor = 4.0;
    double chunk_factor = 2.0;
    size_t min_chunk = 512;
    idx_t list_major_min_batch = -1;
    int helpers = -1;

    /// Receives (MappingId, vectors scanned, bytes) for every scan task;
    /// nullptr: the runtime's monitor. Not owned.
    TrafficSink* traffic_sink = nullptr;

    /// IndexIVFCCD: `index` must be trained before searching; the runtime
    /// is kept alive by the index.
    IndexIVFCCD(
            IndexIVF* index,
            std::shared_ptr<Runtime> runtime,
            uint32_t table_id = 0,
            bool own_fields = false);
    ~IndexIVFCCD() override;

    /// uses_scanners: false when the wrapped index has no
    /// InvertedListScanner (the FastScan family), whose searches never
    /// reach the pool.
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

    const std::shared_ptr<Runtime>& runtime() const {
        return runtime_;
    }

   private:
    void sync_from_index();
    /// ccd_params: the wrapped index's parameters for one call.
    SearchParametersIVFCCD ccd_params(const SearchParameters* params) const;

    std::shared_ptr<Runtime> runtime_;
    bool has_scanner_ = false;
};

} // namespace ccd
} // namespace faiss
