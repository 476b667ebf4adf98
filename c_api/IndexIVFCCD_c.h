/**
 * IndexIVFCCD_c.h: IVF search through a given FaissCcdPool
 * (faiss::ccd::IndexIVFCCD), and the process's default parallel mode.
 *
 * Most programs need neither: faiss_IndexIVF_set_parallel_mode(ivf,
 * FAISS_PARALLEL_MODE_CCD) (FAISS's C API, IndexIVF_c.h) makes an IVF
 * index search through the default pool (faiss_ccd_set_default_pool), and
 * that holds through whatever wraps it. The explicit form picks the pool
 * and the table id (the high half of the tasks' keys: give each index that
 * shares a pool its own).
 *
 * A FaissCcdIndexIVFCCD searches an IVF index (a faiss::IndexIVF itself:
 * IVF..,Flat / SQ / PQ made by the factory without a transform or IDMap in
 * front) with the index's current nprobe, and returns what faiss_Index_search
 * returns (same labels except among exactly tied distances).
 *
 * Lifetime. The handle keeps its pool alive: the pool handle may be freed
 * first. The index is FAISS's C API object, which has no reference count:
 * it must outlive the handle. Threads: searches from any number of threads
 * at once; do not change the index (train, add, nprobe) while they run.
 */

#ifndef FAISS_CCD_INDEX_IVF_CCD_C_H
#define FAISS_CCD_INDEX_IVF_CCD_C_H

#include "faiss_ccd_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/// faiss_ccd_IndexIVFCCD_new: index must be a faiss::IndexIVF (else
/// FAISS_CCD_ERROR_INVALID_ARGUMENT); table_id 0xffffffff is reserved.
int faiss_ccd_IndexIVFCCD_new(
        FaissCcdIndexIVFCCD** p_ivfccd,
        FaissIndex* index,
        FaissCcdPool* pool,
        uint32_t table_id);

/// faiss_ccd_IndexIVFCCD_search: as faiss_Index_search (n * k distances
/// and labels, k > 0), run on the pool. An untrained index:
/// FAISS_CCD_ERROR_INVALID_ARGUMENT.
int faiss_ccd_IndexIVFCCD_search(
        const FaissCcdIndexIVFCCD* ivfccd,
        faiss_ccd_idx_t n,
        const float* x,
        faiss_ccd_idx_t k,
        float* distances,
        faiss_ccd_idx_t* labels);

/// faiss_ccd_IndexIVFCCD_range_search: as faiss_Index_range_search, into
/// `result` (made by faiss_RangeSearchResult_new(&result, n)), run on the
/// pool.
int faiss_ccd_IndexIVFCCD_range_search(
        const FaissCcdIndexIVFCCD* ivfccd,
        faiss_ccd_idx_t n,
        const float* x,
        float radius,
        FaissRangeSearchResult* result);

/// faiss_ccd_IndexIVFCCD_free: drop the handle and its reference to the
/// pool. NULL: no-op.
void faiss_ccd_IndexIVFCCD_free(FaissCcdIndexIVFCCD* ivfccd);

/// faiss_ccd_set_default_parallel_mode: the parallel_mode IVF indexes made
/// or read from now on start with (0-3, or FAISS_PARALLEL_MODE_CCD; the
/// environment variable FAISS_CCD_PARALLEL_MODE=ccd does the same). Another
/// value: FAISS_CCD_ERROR_FAISS_EXCEPTION, and the default is unchanged.
int faiss_ccd_set_default_parallel_mode(int mode);

/// faiss_ccd_get_default_parallel_mode: the mode new IVF indexes start with.
int faiss_ccd_get_default_parallel_mode(int* p_mode);

#ifdef __cplusplus
}
#endif

#endif
