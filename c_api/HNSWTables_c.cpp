/**
 * HNSWTables_c.cpp: FaissCcdHNSWTables, a faiss::ccd::HNSWTables (which
 * keeps its runtime alive) over indexes the caller keeps alive.
 */

#include "HNSWTables_c.h"
#include "handles_impl.h"
#include "macros_impl.h"

#include <faiss/HNSWTables.h>
#include <faiss/impl/FaissException.h>

#include <cinttypes>
#include <cstring>
#include <memory>

struct FaissCcdHNSWTables_H {
    std::unique_ptr<faiss::ccd::HNSWTables> tables;
};

namespace {

/// not_found: an "unknown table id" FaissException as NOT_FOUND, any other
/// error with its own code. From inside a catch block.
int not_found_or_rethrown(const char* func, uint32_t table_id) {
    try {
        throw;
    } catch (const faiss::FaissException& e) {
        if (std::strstr(e.what(), "unknown table id") != nullptr) {
            return faiss_ccd_c::fail(
                    FAISS_CCD_ERROR_NOT_FOUND,
                    func,
                    "unknown table id %" PRIu32,
                    table_id);
        }
        return faiss_ccd_c::fail_current_exception(func);
    } catch (...) {
        return faiss_ccd_c::fail_current_exception(func);
    }
}

} // namespace

extern "C" {

int faiss_ccd_HNSWTables_new(
        FaissCcdHNSWTables** p_tables,
        FaissCcdPool* pool) {
    FAISS_CCD_C_CHECK_NOT_NULL(p_tables);
    *p_tables = nullptr;
    FAISS_CCD_C_CHECK_NOT_NULL(pool);
    FAISS_CCD_C_TRY {
        std::unique_ptr<FaissCcdHNSWTables_H> h(new FaissCcdHNSWTables_H);
        h->tables.reset(new faiss::ccd::HNSWTables(pool->runtime));
        *p_tables = h.release();
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_HNSWTables_add_table(
        FaissCcdHNSWTables* tables,
        uint32_t table_id,
        FaissIndex* index) {
    FAISS_CCD_C_CHECK_NOT_NULL(tables);
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    auto* hnsw = dynamic_cast<faiss::IndexHNSW*>(index_of(index));
    FAISS_CCD_C_CHECK_ARG(
            hnsw,
            "the index is not a faiss::IndexHNSW (e.g. \"HNSW32\")");
    FAISS_CCD_C_CHECK_ARG(
            table_id != UINT32_MAX,
            "table_id 0xffffffff is reserved");
    FAISS_CCD_C_CHECK_ARG(
            !tables->tables->has_table(table_id),
            "table id %" PRIu32 " is already taken",
            table_id);
    FAISS_CCD_C_TRY {
        tables->tables->add_table(table_id, hnsw, /*own_index=*/false);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_HNSWTables_remove_table(
        FaissCcdHNSWTables* tables,
        uint32_t table_id) {
    FAISS_CCD_C_CHECK_NOT_NULL(tables);
    try {
        // Waits for the queries already running on the table.
        tables->tables->remove_table(table_id).wait();
    } catch (...) {
        return not_found_or_rethrown(__func__, table_id);
    }
    return FAISS_CCD_OK;
}

int faiss_ccd_HNSWTables_has_table(
        const FaissCcdHNSWTables* tables,
        uint32_t table_id,
        int* p_has) {
    FAISS_CCD_C_CHECK_NOT_NULL(tables);
    FAISS_CCD_C_CHECK_NOT_NULL(p_has);
    FAISS_CCD_C_TRY {
        *p_has = tables->tables->has_table(table_id) ? 1 : 0;
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_HNSWTables_num_tables(
        const FaissCcdHNSWTables* tables,
        size_t* p_num_tables) {
    FAISS_CCD_C_CHECK_NOT_NULL(tables);
    FAISS_CCD_C_CHECK_NOT_NULL(p_num_tables);
    FAISS_CCD_C_TRY {
        *p_num_tables = tables->tables->num_tables();
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_HNSWTables_set_hand_off(
        FaissCcdHNSWTables* tables,
        int hand_off) {
    FAISS_CCD_C_CHECK_NOT_NULL(tables);
    FAISS_CCD_C_CHECK_ARG(
            hand_off >= -1 && hand_off <= 1,
            "hand_off must be -1, 0 or 1 (got %d)",
            hand_off);
    tables->tables->hand_off = hand_off;
    return FAISS_CCD_OK;
}

int faiss_ccd_HNSWTables_search(
        const FaissCcdHNSWTables* tables,
        uint32_t table_id,
        faiss_ccd_idx_t n,
        const float* x,
        faiss_ccd_idx_t k,
        float* distances,
        faiss_ccd_idx_t* labels) {
    FAISS_CCD_C_CHECK_NOT_NULL(tables);
    FAISS_CCD_C_CHECK_NOT_NULL(x);
    FAISS_CCD_C_CHECK_NOT_NULL(distances);
    FAISS_CCD_C_CHECK_NOT_NULL(labels);
    FAISS_CCD_C_CHECK_ARG(n >= 0, "n must be >= 0 (got %" PRId64 ")", n);
    FAISS_CCD_C_CHECK_ARG(k > 0, "k must be > 0 (got %" PRId64 ")", k);
    try {
        tables->tables->search(table_id, n, x, k, distances, labels);
    } catch (...) {
        // Unknown id, or a table removed while the call started.
        return not_found_or_rethrown(__func__, table_id);
    }
    return FAISS_CCD_OK;
}

void faiss_ccd_HNSWTables_free(FaissCcdHNSWTables* tables) {
    delete tables; // removes every table
}

} // extern "C"
