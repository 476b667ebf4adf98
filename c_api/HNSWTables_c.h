/**
 * HNSWTables_c.h: FaissCcdHNSWTables, many HNSW indexes added by table id
 * and searched through one FaissCcdPool, one task per query
 * (faiss::ccd::HNSWTables). Under the "ccd" policy all queries of a table
 * run on one CCD, so the table's hot graph nodes stay in that L3 cache.
 *
 * Results equal faiss_Index_search on the same index. A table searches
 * with the efSearch its index had when it was added.
 *
 * Lifetime. The handle keeps its pool alive. Indexes are FAISS's C API
 * objects, which have no reference count: each must outlive its tables
 * (until remove_table returns, or the handle is freed). Threads: every
 * function from any thread, concurrently, except faiss_ccd_HNSWTables_free;
 * do not change an added index.
 */

#ifndef FAISS_CCD_HNSW_TABLES_C_H
#define FAISS_CCD_HNSW_TABLES_C_H

#include "faiss_ccd_c.h"

#ifdef __cplusplus
extern "C" {
#endif

int faiss_ccd_HNSWTables_new(FaissCcdHNSWTables** p_tables, FaissCcdPool* pool);

/// faiss_ccd_HNSWTables_add_table: add index (a faiss::IndexHNSW, e.g.
/// "HNSW32" or "HNSW32,SQ8"; else FAISS_CCD_ERROR_INVALID_ARGUMENT) as
/// table_id. An id already taken, or the reserved 0xffffffff:
/// FAISS_CCD_ERROR_INVALID_ARGUMENT. One index may be added under
/// several ids.
int faiss_ccd_HNSWTables_add_table(
        FaissCcdHNSWTables* tables,
        uint32_t table_id,
        FaissIndex* index);

/// faiss_ccd_HNSWTables_remove_table: remove table_id (unknown:
/// FAISS_CCD_ERROR_NOT_FOUND). Searches started later fail; the call waits
/// for the queries already running on the table: the index may be freed
/// when it returns.
int faiss_ccd_HNSWTables_remove_table(
        FaissCcdHNSWTables* tables,
        uint32_t table_id);

/// faiss_ccd_HNSWTables_has_table: *p_has = 1 if table_id names a table,
/// else 0.
int faiss_ccd_HNSWTables_has_table(
        const FaissCcdHNSWTables* tables,
        uint32_t table_id,
        int* p_has);

int faiss_ccd_HNSWTables_num_tables(
        const FaissCcdHNSWTables* tables,
        size_t* p_num_tables);

/// faiss_ccd_HNSWTables_search: n queries x (n * the table's d floats), k
/// nearest each (k > 0) into distances and labels (n * k each); blocks
/// until all are done. Unknown table_id: FAISS_CCD_ERROR_NOT_FOUND.
int faiss_ccd_HNSWTables_search(
        const FaissCcdHNSWTables* tables,
        uint32_t table_id,
        faiss_ccd_idx_t n,
        const float* x,
        faiss_ccd_idx_t k,
        float* distances,
        faiss_ccd_idx_t* labels);

/// faiss_ccd_HNSWTables_set_hand_off: where synchronous searches run their
/// queries (HNSWTables::hand_off): -1 (default) a cost decision, 1 always
/// one pool task per query on the table's CCD, 0 always in the calling
/// thread. Other values: FAISS_CCD_ERROR_INVALID_ARGUMENT. Set it before
/// searching (it is read by each search).
int faiss_ccd_HNSWTables_set_hand_off(FaissCcdHNSWTables* tables, int hand_off);

/// faiss_ccd_HNSWTables_free: remove every table, then drop the handle's
/// reference to the pool. NULL: no-op.
void faiss_ccd_HNSWTables_free(FaissCcdHNSWTables* tables);

#ifdef __cplusplus
}
#endif

#endif
