/**
 * IndexIVFCCD_c.cpp: FaissCcdIndexIVFCCD, a faiss::ccd::IndexIVFCCD (which
 * holds its runtime), and the default parallel mode.
 */

#include "IndexIVFCCD_c.h"
#include "handles_impl.h"
#include "macros_impl.h"

#include <faiss/IVFSearchCCD.h>
#include <faiss/IndexIVFCCD.h>
#include <faiss/impl/AuxIndexStructures.h>

#include <cinttypes>
#include <memory>

struct FaissCcdIndexIVFCCD_H {
    std::unique_ptr<faiss::ccd::IndexIVFCCD> ivfccd;
};

extern "C" {

int faiss_ccd_IndexIVFCCD_new(
        FaissCcdIndexIVFCCD** p_ivfccd,
        FaissIndex* index,
        FaissCcdPool* pool,
        uint32_t table_id) {
    FAISS_CCD_C_CHECK_NOT_NULL(p_ivfccd);
    *p_ivfccd = nullptr;
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(pool);
    // The index itself, not an IVF inside a transform or an IDMap: the
    // wrapper searches the IVF directly and would skip what is around it.
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(index_of(index));
    FAISS_CCD_C_CHECK_ARG(
            ivf,
            "the index is not a faiss::IndexIVF (e.g. \"IVF256,Flat\"; "
            "not one wrapped in a transform or an IDMap)");
    FAISS_CCD_C_CHECK_ARG(
            table_id != UINT32_MAX,
            "table_id 0xffffffff is reserved");
    FAISS_CCD_C_TRY {
        std::unique_ptr<FaissCcdIndexIVFCCD_H> h(new FaissCcdIndexIVFCCD_H);
        h->ivfccd.reset(
                new faiss::ccd::IndexIVFCCD(ivf, pool->runtime, table_id));
        *p_ivfccd = h.release();
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_IndexIVFCCD_search(
        const FaissCcdIndexIVFCCD* ivfccd,
        faiss_ccd_idx_t n,
        const float* x,
        faiss_ccd_idx_t k,
        float* distances,
        faiss_ccd_idx_t* labels) {
    FAISS_CCD_C_CHECK_NOT_NULL(ivfccd);
    FAISS_CCD_C_CHECK_NOT_NULL(x);
    FAISS_CCD_C_CHECK_NOT_NULL(distances);
    FAISS_CCD_C_CHECK_NOT_NULL(labels);
    FAISS_CCD_C_CHECK_ARG(n >= 0, "n must be >= 0 (got %" PRId64 ")", n);
    FAISS_CCD_C_CHECK_ARG(k > 0, "k must be > 0 (got %" PRId64 ")", k);
    FAISS_CCD_C_CHECK_ARG(
            ivfccd->ivfccd->index->is_trained,
            "the index is not trained");
    FAISS_CCD_C_TRY {
        ivfccd->ivfccd->search(n, x, k, distances, labels);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_IndexIVFCCD_range_search(
        const FaissCcdIndexIVFCCD* ivfccd,
        faiss_ccd_idx_t n,
        const float* x,
        float radius,
        FaissRangeSearchResult* result) {
    FAISS_CCD_C_CHECK_NOT_NULL(ivfccd);
    FAISS_CCD_C_CHECK_NOT_NULL(x);
    FAISS_CCD_C_CHECK_NOT_NULL(result);
    FAISS_CCD_C_CHECK_ARG(n >= 0, "n must be >= 0 (got %" PRId64 ")", n);
    auto* res = reinterpret_cast<faiss::RangeSearchResult*>(result);
    FAISS_CCD_C_CHECK_ARG(
            res->nq == size_t(n),
            "result was made for %zu queries, not %" PRId64,
            res->nq,
            n);
    FAISS_CCD_C_CHECK_ARG(
            ivfccd->ivfccd->index->is_trained,
            "the index is not trained");
    FAISS_CCD_C_TRY {
        ivfccd->ivfccd->range_search(n, x, radius, res);
    }
    FAISS_CCD_C_CATCH_ALL;
}

void faiss_ccd_IndexIVFCCD_free(FaissCcdIndexIVFCCD* ivfccd) {
    delete ivfccd;
}

int faiss_ccd_set_default_parallel_mode(int mode) {
    FAISS_CCD_C_TRY {
        faiss::ccd::set_default_parallel_mode(mode);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_get_default_parallel_mode(int* p_mode) {
    FAISS_CCD_C_CHECK_NOT_NULL(p_mode);
    FAISS_CCD_C_TRY {
        *p_mode = faiss::ccd::default_parallel_mode();
    }
    FAISS_CCD_C_CATCH_ALL;
}

} // extern "C"
