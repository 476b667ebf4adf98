// IVFSearchCCD: the entry points the fork's IndexIVF calls in the CCD
// mode. Each call is resolved once here (faiss/ivf_ccd/ResolvedCall.h),
// then: CoarseAssignment.h quantizes, the index's own search_preassigned
// comes back to ivf_search_preassigned, ScanPlan.h decides the shape and
// ScanShare.h runs KnnScan.cpp's or RangeScan.cpp's scans on the pool.

#include <faiss/IVFSearchCCD.h>

#include <faiss/ForkSafety.h>
#include <faiss/IVFScanCost.h>
#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/ivf_ccd/CoarseAssignment.h>
#include <faiss/ivf_ccd/KnnScan.h>
#include <faiss/ivf_ccd/RangeScan.h>
#include <faiss/ivf_ccd/ResolvedCall.h>
#include <faiss/utils/utils.h>

#include <memory>
#include <mutex>

namespace faiss {
namespace ccd {

namespace {

using ivf::CoarseAssignment;
using ivf::ResolvedCall;

/// A fork() child searches too (ForkSafety.h), from the moment the IVF
/// search is loaded.
[[maybe_unused]] const bool fork_safe = (make_searches_fork_safe(), true);

/// assign_then_scan: the coarse assignment, then `scan(coarse, &stats)`
/// with `call` current (ResolvedCall::Current) for the scans to find; the
/// call's times and counts go to indexIVF_stats as stock's search does.
template <class Scan>
void assign_then_scan(
        const ResolvedCall& call,
        Index::idx_t n,
        const float* x,
        Scan&& scan) {
    // FAISS's own loops around the scans (IVFPQR's refinement) go over
    // the n queries: no thread past them.
    const FallbackTeam team(true, n);
    const double t0 = getmillisecs();
    const CoarseAssignment coarse(call, n, x);
    IndexIVFStats local;
    {
        const ResolvedCall::Current current(call);
        scan(coarse, &local);
    }
    const double total_ms = getmillisecs() - t0;
    std::lock_guard<std::mutex> lock(ivf::stats_mutex());
    indexIVF_stats.add(local);
    indexIVF_stats.quantization_time += coarse.ms;
    ivf_ccd_stats.coarse_slices += size_t(coarse.slices);
    indexIVF_stats.search_time += total_ms;
}

} // namespace

bool uses_ccd_mode(const IndexIVF& ivf, const SearchParametersIVF* params) {
    return ivf::ccd_requested(ivf, params) &&
            ivf::servable_scanner(ivf, params, false) != nullptr;
}

uint32_t table_id_of(const IndexIVF& ivf) {
    const uint32_t id =
            uint32_t(hash_mapping_id(uint64_t(uintptr_t(ivf.invlists))) >> 32);
    return id == table_of(kLocalMappingId) ? 0 : id;
}

void ivf_search(
        const IndexIVF& ivf,
        Index::idx_t n,
        const float* x,
        Index::idx_t k,
        float* distances,
        Index::idx_t* labels,
        const SearchParametersIVF* params) {
    FAISS_THROW_IF_NOT_MSG(k > 0, "IVF search: k must be > 0");
    if (n == 0) {
        return;
    }
    const ResolvedCall call(ivf, params, /*store_pairs=*/false);
    // Virtual: an override (IVFPQR, IVFFlatDedup) does its part around the
    // scans, which come back to ivf_search_preassigned.
    assign_then_scan(
            call,
            n,
            x,
            [&](const CoarseAssignment& coarse, IndexIVFStats* stats) {
                ivf.search_preassigned(
                        n,
                        x,
                        k,
                        coarse.keys.data(),
                        coarse.dis.data(),
                        distances,
                        labels,
                        false,
                        params,
                        stats);
            });
}

void ivf_range_search(
        const IndexIVF& ivf,
        Index::idx_t n,
        const float* x,
        float radius,
        RangeSearchResult* result,
        const SearchParametersIVF* params) {
    const ResolvedCall call(ivf, params, /*store_pairs=*/false);
    assign_then_scan(
            call,
            n,
            x,
            [&](const CoarseAssignment& coarse, IndexIVFStats* stats) {
                ivf.range_search_preassigned(
                        n,
                        x,
                        radius,
                        coarse.keys.data(),
                        coarse.dis.data(),
                        result,
                        false,
                        params,
                        stats);
            });
}

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
        IndexIVFStats* stats) {
    if (const ResolvedCall* call =
                ResolvedCall::take_current(ivf, params, store_pairs)) {
        // ivf_search decided the call (uses_ccd_mode before it).
        ivf::knn_scans(
                *call,
                n,
                x,
                k,
                keys,
                coarse_dis,
                distances,
                labels,
                stats);
        return true;
    }
    if (!ivf::ccd_requested(ivf, params)) {
        return false;
    }
    std::unique_ptr<InvertedListScanner> scanner =
            ivf::servable_scanner(ivf, params, store_pairs);
    if (scanner == nullptr) {
        return false;
    }
    FAISS_THROW_IF_NOT_MSG(
            !(params && params->sel && store_pairs),
            "selector and store_pairs cannot be combined");
    const ResolvedCall call(ivf, params, store_pairs, std::move(scanner));
    ivf::knn_scans(call, n, x, k, keys, coarse_dis, distances, labels, stats);
    return true;
}

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
        IndexIVFStats* stats) {
    if (const ResolvedCall* call =
                ResolvedCall::take_current(ivf, params, store_pairs)) {
        // ivf_range_search decided the call (uses_ccd_mode before it).
        ivf::range_scans(*call, n, x, radius, keys, coarse_dis, result, stats);
        return true;
    }
    // FAISS's own range loop needs a scanner and runs modes 0, 1 and 2
    // only; it throws otherwise inside an OpenMP region, which aborts the
    // process: such calls are refused here, before it runs.
    std::unique_ptr<InvertedListScanner> scanner = ivf::servable_scanner(
            ivf,
            params,
            store_pairs,
            /*counts_codes=*/false);
    FAISS_THROW_IF_NOT_MSG(
            scanner != nullptr,
            "range_search: this index has no InvertedListScanner");
    if (!ivf::ccd_requested(ivf, params)) {
        const int stock = stock_parallel_mode(ivf.parallel_mode);
        FAISS_THROW_IF_NOT_FMT(
                stock == 0 || stock == 1 || stock == 2,
                "range_search: parallel_mode %d not supported (FAISS's "
                "range search runs modes 0, 1, 2 and PARALLEL_MODE_CCD)",
                ivf.parallel_mode);
        return false;
    }
    const ResolvedCall call(ivf, params, store_pairs, std::move(scanner));
    ivf::range_scans(call, n, x, radius, keys, coarse_dis, result, stats);
    return true;
}

} // namespace ccd
} // namespace faiss
