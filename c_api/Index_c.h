/**
 * Index_c.h: FaissCcdIndex, a handle on any faiss::Index, made from a
 * factory string or read from a file.
 *
 * Lifetime. The handle holds the index by reference count: handles built on
 * it (FaissCcdIndexIVFCCD, a table of FaissCcdHNSWTables) keep the index
 * alive after faiss_ccd_Index_free, which only drops the handle's own
 * reference. The index is deleted when the last of them lets go.
 *
 * Threads. As in FAISS: searches may run concurrently; train, add and the
 * setters must not run concurrently with anything else on the same index,
 * including searches through handles built on it.
 */

#ifndef FAISS_CCD_INDEX_C_H
#define FAISS_CCD_INDEX_C_H

#include "faiss_ccd_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/// FaissCcdMetricType: the same values as faiss::MetricType.
typedef enum FaissCcdMetricType {
    FAISS_CCD_METRIC_INNER_PRODUCT = 0,
    FAISS_CCD_METRIC_L2 = 1
} FaissCcdMetricType;

/// faiss_ccd_index_factory: faiss::index_factory(d, description, metric),
/// e.g. "IVF256,Flat", "IVF1024,SQ8", "HNSW32". d must be > 0.
int faiss_ccd_index_factory(
        FaissCcdIndex** p_index,
        int d,
        const char* description,
        FaissCcdMetricType metric);

/// faiss_ccd_read_index: faiss::read_index(fname).
int faiss_ccd_read_index(FaissCcdIndex** p_index, const char* fname);

/// faiss_ccd_write_index: faiss::write_index(index, fname).
int faiss_ccd_write_index(const FaissCcdIndex* index, const char* fname);

/// faiss_ccd_Index_train: train on n vectors x (n * d floats).
int faiss_ccd_Index_train(
        FaissCcdIndex* index,
        faiss_ccd_idx_t n,
        const float* x);

/// faiss_ccd_Index_add: add n vectors (ids ntotal, ntotal + 1, ...). Add,
/// add_with_ids and search need a trained index (else
/// FAISS_CCD_ERROR_INVALID_ARGUMENT).
int faiss_ccd_Index_add(
        FaissCcdIndex* index,
        faiss_ccd_idx_t n,
        const float* x);

/// faiss_ccd_Index_add_with_ids: add n vectors with ids xids (n ids); only
/// for indexes that support it (IVF, IDMap...).
int faiss_ccd_Index_add_with_ids(
        FaissCcdIndex* index,
        faiss_ccd_idx_t n,
        const float* x,
        const faiss_ccd_idx_t* xids);

/// faiss_ccd_Index_search: FAISS's own search (its OpenMP threads, not a
/// pool): the k nearest of n queries x into distances and labels (n * k
/// each, best first; label -1 past the last result). k must be > 0.
int faiss_ccd_Index_search(
        const FaissCcdIndex* index,
        faiss_ccd_idx_t n,
        const float* x,
        faiss_ccd_idx_t k,
        float* distances,
        faiss_ccd_idx_t* labels);

/// Getters: the index's dimension, its number of vectors, whether it is
/// trained (0 or 1).
int faiss_ccd_Index_d(const FaissCcdIndex* index, int* p_d);
int faiss_ccd_Index_ntotal(
        const FaissCcdIndex* index,
        faiss_ccd_idx_t* p_ntotal);
int faiss_ccd_Index_is_trained(const FaissCcdIndex* index, int* p_is_trained);

/// nprobe of an IVF index (also one inside an IndexPreTransform or an
/// IndexIDMap); nprobe must be > 0. Other indexes:
/// FAISS_CCD_ERROR_INVALID_ARGUMENT.
int faiss_ccd_Index_set_nprobe(FaissCcdIndex* index, size_t nprobe);
int faiss_ccd_Index_get_nprobe(const FaissCcdIndex* index, size_t* p_nprobe);

/// efSearch of an IndexHNSW (hnsw.efSearch, > 0). Other indexes:
/// FAISS_CCD_ERROR_INVALID_ARGUMENT. A table of FaissCcdHNSWTables takes
/// the efSearch its index has when it is added; set it before that.
int faiss_ccd_Index_set_ef_search(FaissCcdIndex* index, int ef_search);
int faiss_ccd_Index_get_ef_search(const FaissCcdIndex* index, int* p_ef_search);

/// faiss_ccd_Index_free: drop the handle (see "Lifetime"). NULL: no-op.
void faiss_ccd_Index_free(FaissCcdIndex* index);

#ifdef __cplusplus
}
#endif

#endif
