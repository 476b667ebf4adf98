/**
 * HNSWTables_c.h: FaissCcdHNSWTables, many HNSW indexes registered by
 * table id and searched through one FaissCcdPool, one task per query
 * (faiss::ccd::HNSWTables). Under the "ccd" policy all queries of a table
 * run on one CCD, so the table's hot graph nodes stay in that L3 cache.
 *
 * Results equal faiss_ccd_Index_search on the same index. A table searches
 * with the efSearch its index had when it was added.
 *
 * Lifetime. The handle keeps its pool alive, and each table keeps its
 * index alive until it is removed (or the handle freed): the index handle
 * may be freed right after adding it. Threads: every function from any
 * thread, concurrently, except faiss_ccd_HNSWTables_free; do not change a
 * registered index.
 */

#ifndef FAISS_CCD_HNSW_TABLES_C_H
#define FAISS_CCD_HNSW_TABLES_C_H

#include "faiss_ccd_c.h"

#ifdef __cplusplus
extern "C" {
#endif

int faiss_ccd_HNSWTables_new(FaissCcdHNSWTables** p_tables, FaissCcdPool* pool);

/// faiss_ccd_HNSWTables_add_table: register index (a faiss::IndexHNSW, e.g.
/// "HNSW32" or "HNSW32,SQ8"; else FAISS_CCD_ERROR_INVALID_ARGUMENT) as
/// table_id. An id already taken, or the reserved 0xffffffff:
/// FAISS_CCD_ERROR_INVALID_ARGUMENT. One index may be added under
/// several ids.
int faiss_ccd_HNSWTables_add_table(
        FaissCcdHNSWTables* tables,
        uint32_t table_id,
        FaissCcdIndex* index);

/// faiss_ccd_HNSWTables_remove_table: unregister table_id (unknown:
/// FAISS_CCD_ERROR_NOT_FOUND). Searches started later fail; the call waits
/// for the queries already running on the table, then drops its reference
/// to the index.
int faiss_ccd_HNSWTables_remove_table(
        FaissCcdHNSWTables* tables,
        uint32_t table_id);

/// faiss_ccd_HNSWTables_has_table: *p_has = 1 if table_id is registered,
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

/// faiss_ccd_HNSWTables_free: remove every table (as remove_table does),
/// then drop the handle's reference to the pool. NULL: no-op.
void faiss_ccd_HNSWTables_free(FaissCcdHNSWTables* tables);

#ifdef __cplusplus
}
#endif

#endif
