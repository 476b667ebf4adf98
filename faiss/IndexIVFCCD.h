/**
 * IndexIVFCCD: IVF search whose probed-list scans run on a CCD-aware Pool
 * instead of FAISS's `#pragma omp for schedule(dynamic)`.
 *
 * It wraps an existing faiss::IndexIVF (not owned unless own_fields is set)
 * and shares a Runtime (pool and monitor) with any number of other indexes
 * and client threads. Each scan is a task keyed by MappingId(table_id,
 * list_no), so all scans of one list run on the CCD whose L3 holds that
 * list (IVFSearchCCD.h has the task shapes). Results equal the wrapped
 * index's own search(): same distances, same labels except among exactly
 * tied distances, -1 labels when fewer than k candidates.
 *
 * Per search call: coarse quantization once for the batch, in the calling
 * thread, as IndexIVF::search does it (FAISS's OpenMP held to one thread,
 * so many clients never oversubscribe the machine); then the scans on the
 * pool. Searches the scans cannot answer (ccd_supports_index and
 * ccd_supports_params: FastScan, IVFPQR, IVFFlatDedup, max_codes,
 * IDSelectors) and searches of an empty
 * index fall back to the wrapped index's own search.
 *
 * Per-call knobs: SearchParametersIVFCCD (nprobe and the task shape); with
 * plain SearchParametersIVF or none, the fields below give the shape.
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
    idx_t list_major_min_batch = 64;

    /// Receives (MappingId, vectors scanned, bytes) for every scan task:
    /// the runtime's monitor unless set otherwise; may be null. Not owned.
    TrafficSink* traffic_sink;

    /// IndexIVFCCD: `index` must be trained before searching; the runtime
    /// is kept alive by the index.
    IndexIVFCCD(
            IndexIVF* index,
            std::shared_ptr<Runtime> runtime,
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

    const std::shared_ptr<Runtime>& runtime() const {
        return runtime_;
    }

   private:
    void sync_from_index();
    /// ivf_params: params as SearchParametersIVF (null when none), or a
    /// FaissException naming the wrong type.
    const SearchParametersIVF* ivf_params(const SearchParameters* params) const;
    /// shape: the task shape of a call.
    SearchParametersIVFCCD shape(const SearchParametersIVF* params) const;
    IVFScanTarget target() const;

    std::shared_ptr<Runtime> runtime_;
    bool has_scanner_ = false;
};

} // namespace ccd
} // namespace faiss
