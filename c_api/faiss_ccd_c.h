/**
 * faiss_ccd_c.h: types shared by every header of the faiss-ccd C API, the
 * part of the fork's C API that FAISS's own has no equivalent for (the
 * pool, explicit IVF search through a pool, HNSW tables). Indexes are
 * FAISS's C API objects (FaissIndex, from <faiss/c_api/Index_c.h>: made by
 * faiss_index_factory, faiss_read_index, ...); the CCD mode of an IVF index
 * is faiss_IndexIVF_set_parallel_mode(ivf, FAISS_PARALLEL_MODE_CCD).
 *
 * Conventions of this API (FAISS's functions keep theirs):
 *  - Objects are opaque handles made by a *_new function and released by
 *    the matching *_free function; *_free(NULL) does nothing.
 *  - Every function that can fail returns an int: FAISS_CCD_OK (0) or a
 *    negative FaissCcdErrorCode (error_c.h). The message of the failure is
 *    then FAISS's faiss_get_last_error() on the same thread, as for
 *    FAISS's own functions.
 *  - Pointer arguments must not be NULL (FAISS_CCD_ERROR_NULL_ARGUMENT).
 *  - A call that makes a handle sets *out to NULL first, and to the new
 *    handle only on success. Other outputs are left as they were when a
 *    call fails before computing anything; a search that fails midway may
 *    have written part of its distances and labels.
 */

#ifndef FAISS_CCD_C_H
#define FAISS_CCD_C_H

#include <faiss/c_api/Index_c.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// faiss_ccd_idx_t: vector ids and counts (FAISS's idx_t).
typedef int64_t faiss_ccd_idx_t;

/// Opaque handles; each header documents its own.
typedef struct FaissCcdPool_H FaissCcdPool;
typedef struct FaissCcdIndexIVFCCD_H FaissCcdIndexIVFCCD;
typedef struct FaissCcdHNSWTables_H FaissCcdHNSWTables;

#ifdef __cplusplus
}
#endif

#endif
