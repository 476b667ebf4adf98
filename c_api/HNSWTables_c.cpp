/**
 * HNSWTables_c.cpp: FaissCcdHNSWTables, a faiss::ccd::HNSWTables (which
 * keeps its runtime alive) plus the references that keep its tables'
 * indexes alive.
 */

#include "HNSWTables_c.h"
#include "handles_impl.h"
#include "macros_impl.h"

#include <faiss/HNSWTables.h>
#include <faiss/impl/FaissException.h>

#include <cinttypes>
#include <cstring>
#include <future>
#include <mutex>
#include <unordered_map>
#include <vector>

struct FaissCcdHNSWTables_H {
    // Destroyed in reverse order: the tables before what they use.
    std::mutex mutex; ///< guards `indexes` and (un)registration
    std::unordered_map<uint32_t, std::shared_ptr<faiss::Index>> indexes;
    std::unique_ptr<faiss::ccd::HNSWTables> tables;
};

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
        FaissCcdIndex* index) {
    FAISS_CCD_C_CHECK_NOT_NULL(tables);
    FAISS_CCD_C_CHECK_NOT_NULL(index);
    auto* hnsw = dynamic_cast<faiss::IndexHNSW*>(index->index.get());
    FAISS_CCD_C_CHECK_ARG(
            hnsw,
            "the index is not a faiss::IndexHNSW (e.g. \"HNSW32\")");
    FAISS_CCD_C_CHECK_ARG(
            table_id != UINT32_MAX,
            "table_id 0xffffffff is reserved");
    FAISS_CCD_C_TRY {
        std::lock_guard<std::mutex> lock(tables->mutex);
        auto inserted = tables->indexes.emplace(table_id, index->index);
        FAISS_CCD_C_CHECK_ARG(
                inserted.second,
                "table id %" PRIu32 " is already taken",
                table_id);
        try {
            tables->tables->add_table(table_id, hnsw, false);
        } catch (...) {
            tables->indexes.erase(inserted.first);
            throw;
        }
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_HNSWTables_remove_table(
        FaissCcdHNSWTables* tables,
        uint32_t table_id) {
    FAISS_CCD_C_CHECK_NOT_NULL(tables);
    FAISS_CCD_C_TRY {
        std::shared_ptr<faiss::Index> index;
        std::shared_future<void> released;
        {
            std::lock_guard<std::mutex> lock(tables->mutex);
            auto it = tables->indexes.find(table_id);
            if (it == tables->indexes.end()) {
                return faiss_ccd_c::fail(
                        FAISS_CCD_ERROR_NOT_FOUND,
                        __func__,
                        "unknown table id %" PRIu32,
                        table_id);
            }
            released = tables->tables->remove_table(table_id);
            index = std::move(it->second);
            tables->indexes.erase(it);
        }
        released.wait(); // queries in flight are done with the index
    }
    FAISS_CCD_C_CATCH_ALL;
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
    FAISS_CCD_C_TRY {
        try {
            tables->tables->search(table_id, n, x, k, distances, labels);
        } catch (const faiss::FaissException& e) {
            // Unknown id, or a table removed while the call started; any
            // other error keeps its own code even if the table went away.
            if (std::strstr(e.what(), "unknown table id") != nullptr) {
                return faiss_ccd_c::fail(
                        FAISS_CCD_ERROR_NOT_FOUND,
                        __func__,
                        "unknown table id %" PRIu32,
                        table_id);
            }
            throw;
        }
    }
    FAISS_CCD_C_CATCH_ALL;
}

void faiss_ccd_HNSWTables_free(FaissCcdHNSWTables* tables) {
    if (tables == nullptr) {
        return;
    }
    try {
        std::vector<std::shared_future<void>> released;
        {
            std::lock_guard<std::mutex> lock(tables->mutex);
            for (const auto& entry : tables->indexes) {
                released.push_back(tables->tables->remove_table(entry.first));
            }
        }
        for (auto& r : released) {
            r.wait();
        }
    } catch (...) {
        // Out of memory while collecting: the tables' destructor below
        // still releases every table.
    }
    delete tables;
}

} // extern "C"
