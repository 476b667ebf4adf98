/**
 * IndexIVFCCD_c.h: FaissCcdIndexIVFCCD, IVF search whose list scans run on
 * a FaissCcdPool (faiss::ccd::IndexIVFCCD).
 *
 * It searches an IVF index (a faiss::IndexIVF itself: IVF..,Flat / SQ / PQ
 * made by the factory without a transform or IDMap in front) with the
 * index's current nprobe, and returns what faiss_ccd_Index_search returns
 * (same labels except among exactly tied distances). Scans of one inverted
 * list all run on the CCD that holds it, keyed by (table_id, list number):
 * give each index sharing a pool its own table_id.
 *
 * Lifetime. The handle keeps its index and its pool alive: either may be
 * freed before it. Threads: searches from any number of threads at once;
 * do not change the index (train, add, set_nprobe) while they run.
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
        FaissCcdIndex* index,
        FaissCcdPool* pool,
        uint32_t table_id);

/// faiss_ccd_IndexIVFCCD_search: as faiss_ccd_Index_search (n * k
/// distances and labels, k > 0), run on the pool. An untrained index:
/// FAISS_CCD_ERROR_INVALID_ARGUMENT; an empty one:
/// FAISS_CCD_ERROR_FAISS_EXCEPTION.
int faiss_ccd_IndexIVFCCD_search(
        const FaissCcdIndexIVFCCD* ivfccd,
        faiss_ccd_idx_t n,
        const float* x,
        faiss_ccd_idx_t k,
        float* distances,
        faiss_ccd_idx_t* labels);

/// faiss_ccd_IndexIVFCCD_free: drop the handle and its references to the
/// index and the pool. NULL: no-op.
void faiss_ccd_IndexIVFCCD_free(FaissCcdIndexIVFCCD* ivfccd);

#ifdef __cplusplus
}
#endif

#endif
