/**
 * Index_c.cpp: FaissCcdIndex, any faiss::Index held by shared_ptr.
 */

#include "Index_c.h"
#include "handles_impl.h"
#include "macros_impl.h"

#include <faiss/IVFlib.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVF.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>

#include <cinttypes>

namespace {

faiss::IndexIVF* as_ivf(const FaissCcdIndex* index) {
    return faiss::ivflib::try_extract_index_ivf(index->index.get());
}

faiss::IndexHNSW* as_hnsw(const FaissCcdIndex* index) {
    return dynamic_cast<faiss::IndexHNSW*>(index->index.get());
}

} // namespace

extern "C" {

int faiss_ccd_index_factory(
        FaissCcdIndex** p_index,
        int d,
        const char* description,
        FaissCcdMetricType metric) {
    FAISS_CCD_C_CHECK_NOT_NULL(p_index);
    *p_index = nullptr;
    FAISS_CCD_C_CHECK_NOT_NULL(description);
    FAISS_CCD_C_CHECK_ARG(d > 0, "d must be > 0 (got %d)", d);
    FAISS_CCD_C_CHECK_ARG(
            metric == FAISS_CCD_METRIC_L2 ||
                    metric == FAISS_CCD_METRIC_INNER_PRODUCT,
            "unknown metric %d",
            int(metric));
    FAISS_CCD_C_TRY {
        std::shared_ptr<faiss::Index> index(faiss::index_factory(
                d,
                description,
                faiss::MetricType(metric)));
        *p_index = new FaissCcdIndex_H{std::move(index)};
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_read_index(FaissCcdIndex** p_index, const char* fname) {
    FAISS_CCD_C_CHECK_NOT_NULL(p_index);
    *p_index = nullptr;
    FAISS_CCD_C_CHECK_NOT_NULL(fname);
    FAISS_CCD_C_TRY {
        std::shared_ptr<faiss::Index> index(faiss::read_index(fname));
        *p_index = new FaissCcdIndex_H{std::move(index)};
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_write_index(const FaissCcdIndex* index, const char* fname) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(fname);
    FAISS_CCD_C_TRY {
        faiss::write_index(index->index.get(), fname);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Index_train(
        FaissCcdIndex* index,
        faiss_ccd_idx_t n,
        const float* x) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(x);
    FAISS_CCD_C_CHECK_ARG(n >= 0, "n must be >= 0 (got %" PRId64 ")", n);
    FAISS_CCD_C_TRY {
        index->index->train(n, x);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Index_add(
        FaissCcdIndex* index,
        faiss_ccd_idx_t n,
        const float* x) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(x);
    FAISS_CCD_C_CHECK_ARG(n >= 0, "n must be >= 0 (got %" PRId64 ")", n);
    FAISS_CCD_C_CHECK_ARG(
            index->index->is_trained,
            "the index is not trained (call faiss_ccd_Index_train first)");
    FAISS_CCD_C_TRY {
        index->index->add(n, x);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Index_add_with_ids(
        FaissCcdIndex* index,
        faiss_ccd_idx_t n,
        const float* x,
        const faiss_ccd_idx_t* xids) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(x);
    FAISS_CCD_C_CHECK_NOT_NULL(xids);
    FAISS_CCD_C_CHECK_ARG(n >= 0, "n must be >= 0 (got %" PRId64 ")", n);
    FAISS_CCD_C_CHECK_ARG(
            index->index->is_trained,
            "the index is not trained (call faiss_ccd_Index_train first)");
    FAISS_CCD_C_TRY {
        index->index->add_with_ids(n, x, xids);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Index_search(
        const FaissCcdIndex* index,
        faiss_ccd_idx_t n,
        const float* x,
        faiss_ccd_idx_t k,
        float* distances,
        faiss_ccd_idx_t* labels) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(x);
    FAISS_CCD_C_CHECK_NOT_NULL(distances);
    FAISS_CCD_C_CHECK_NOT_NULL(labels);
    FAISS_CCD_C_CHECK_ARG(n >= 0, "n must be >= 0 (got %" PRId64 ")", n);
    FAISS_CCD_C_CHECK_ARG(k > 0, "k must be > 0 (got %" PRId64 ")", k);
    FAISS_CCD_C_CHECK_ARG(
            index->index->is_trained,
            "the index is not trained (call faiss_ccd_Index_train first)");
    FAISS_CCD_C_TRY {
        index->index->search(n, x, k, distances, labels);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Index_d(const FaissCcdIndex* index, int* p_d) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(p_d);
    *p_d = index->index->d;
    return FAISS_CCD_OK;
}

int faiss_ccd_Index_ntotal(
        const FaissCcdIndex* index,
        faiss_ccd_idx_t* p_ntotal) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(p_ntotal);
    *p_ntotal = index->index->ntotal;
    return FAISS_CCD_OK;
}

int faiss_ccd_Index_is_trained(const FaissCcdIndex* index, int* p_is_trained) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(p_is_trained);
    *p_is_trained = index->index->is_trained ? 1 : 0;
    return FAISS_CCD_OK;
}

int faiss_ccd_Index_set_nprobe(FaissCcdIndex* index, size_t nprobe) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    faiss::IndexIVF* ivf = as_ivf(index);
    FAISS_CCD_C_CHECK_ARG(ivf, "the index is not an IVF index");
    FAISS_CCD_C_CHECK_ARG(nprobe > 0, "nprobe must be > 0");
    ivf->nprobe = nprobe;
    return FAISS_CCD_OK;
}

int faiss_ccd_Index_get_nprobe(const FaissCcdIndex* index, size_t* p_nprobe) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(p_nprobe);
    const faiss::IndexIVF* ivf = as_ivf(index);
    FAISS_CCD_C_CHECK_ARG(ivf, "the index is not an IVF index");
    *p_nprobe = ivf->nprobe;
    return FAISS_CCD_OK;
}

int faiss_ccd_Index_set_ef_search(FaissCcdIndex* index, int ef_search) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    faiss::IndexHNSW* hnsw = as_hnsw(index);
    FAISS_CCD_C_CHECK_ARG(hnsw, "the index is not an IndexHNSW");
    FAISS_CCD_C_CHECK_ARG(
            ef_search > 0,
            "ef_search must be > 0 (got %d)",
            ef_search);
    hnsw->hnsw.efSearch = ef_search;
    return FAISS_CCD_OK;
}

int faiss_ccd_Index_get_ef_search(
        const FaissCcdIndex* index,
        int* p_ef_search) {
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    FAISS_CCD_C_CHECK_NOT_NULL(p_ef_search);
    const faiss::IndexHNSW* hnsw = as_hnsw(index);
    FAISS_CCD_C_CHECK_ARG(hnsw, "the index is not an IndexHNSW");
    *p_ef_search = hnsw->hnsw.efSearch;
    return FAISS_CCD_OK;
}

void faiss_ccd_Index_free(FaissCcdIndex* index) {
    delete index;
}

} // extern "C"
