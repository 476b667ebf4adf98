#include "HNSWTablesHandle.h"

#include <faiss/impl/FaissAssert.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <vector>

namespace faiss {
namespace ccd {
namespace python {

namespace {

const SearchParametersHNSW* hnsw_params_at(uintptr_t address) {
    if (address == 0) {
        return nullptr;
    }
    auto* params = dynamic_cast<const SearchParametersHNSW*>(
            reinterpret_cast<const SearchParameters*>(address));
    FAISS_THROW_IF_NOT_MSG(
            params, "HNSWTables: params must be a faiss.SearchParametersHNSW");
    return params;
}

std::string message_of(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "unknown exception";
    }
}

/// Batch: the queries of one ticket. The last query to finish pushes the
/// completion; `remaining` counts them down (acq_rel: the pusher sees
/// every other query's writes to the outputs and to `error`).
struct Batch {
    std::shared_ptr<Completions::State> completions;
    int64_t ticket = 0;
    std::atomic<int64_t> remaining{0};
    std::mutex error_mutex;
    std::string error; ///< first error, guarded by error_mutex
    bool failed = false; ///< guarded by error_mutex

    void fail(const std::string& message) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!failed) {
            failed = true;
            error = message;
        }
    }

    /// finish: count down `count` queries; the last one reports.
    void finish(int64_t count) {
        if (remaining.fetch_sub(count, std::memory_order_acq_rel) != count) {
            return;
        }
        Completion c;
        c.ticket = ticket;
        {
            std::lock_guard<std::mutex> lock(error_mutex);
            c.ok = !failed;
            c.error = error;
        }
        completions->push(std::move(c));
    }
};

} // namespace

HNSWTablesHandle::HNSWTablesHandle(PoolHandle& pool)
        : core_(pool.core()),
          tables_(std::make_unique<HNSWTables>(core_->pool)) {
    tables_->traffic_sink = core_->monitor.get();
}

void HNSWTablesHandle::add_table(
        uint32_t table_id,
        uintptr_t index_address,
        int ef_search) {
    auto* hnsw = dynamic_cast<IndexHNSW*>(
            reinterpret_cast<Index*>(index_address));
    FAISS_THROW_IF_NOT_MSG(
            hnsw, "HNSWTables.add_table: index is not a faiss.IndexHNSW");
    tables_->register_table(table_id, hnsw, /*own_index=*/false, ef_search);
}

void HNSWTablesHandle::remove_table(uint32_t table_id) {
    tables_->unregister_table(table_id).wait();
}

void HNSWTablesHandle::search(
        uint32_t table_id,
        int64_t n,
        uintptr_t x,
        int d,
        int64_t k,
        uintptr_t distances,
        uintptr_t labels,
        uintptr_t params_address) const {
    tables_->search(
            table_id,
            n,
            reinterpret_cast<const float*>(x),
            d,
            k,
            reinterpret_cast<float*>(distances),
            reinterpret_cast<Index::idx_t*>(labels),
            hnsw_params_at(params_address));
}

void HNSWTablesHandle::submit(
        uint32_t table_id,
        int64_t n,
        uintptr_t x,
        int d,
        int64_t k,
        uintptr_t distances,
        uintptr_t labels,
        uintptr_t params_address,
        int64_t ticket,
        Completions& completions) const {
    FAISS_THROW_IF_NOT_MSG(n > 0, "HNSWTables.submit: no query");
    FAISS_THROW_IF_NOT_MSG(k > 0, "HNSWTables.submit: k must be > 0");
    FAISS_THROW_IF_NOT_FMT(
            tables_->dimension(table_id) == d,
            "HNSWTables.submit: queries have d=%d, table %u has d=%d",
            d,
            table_id,
            tables_->dimension(table_id));
    const SearchParametersHNSW* params = hnsw_params_at(params_address);
    const float* xq = reinterpret_cast<const float*>(x);
    float* dis = reinterpret_cast<float*>(distances);
    auto* ids = reinterpret_cast<Index::idx_t*>(labels);

    auto batch = std::make_shared<Batch>();
    batch->completions = completions.state();
    batch->ticket = ticket;
    batch->remaining.store(n, std::memory_order_relaxed);
    batch->completions->begin();

    for (int64_t i = 0; i < n; i++) {
        std::vector<float> query(xq + i * d, xq + (i + 1) * d);
        auto callback = [batch, dis, ids, i, k](
                                std::exception_ptr error,
                                HNSWQueryResult& result) {
            if (error) {
                batch->fail(message_of(error));
            } else {
                std::copy_n(result.distances.data(), k, dis + i * k);
                std::copy_n(result.labels.data(), k, ids + i * k);
            }
            batch->finish(1);
        };
        try {
            tables_->search_with_callback(
                    table_id, std::move(query), k, callback, params);
        } catch (const std::exception& e) {
            // Queries 0..i-1 are in flight: the ticket still completes,
            // carrying this error, once they are done.
            batch->fail(e.what());
            batch->finish(n - i);
            return;
        }
    }
}

} // namespace python
} // namespace ccd
} // namespace faiss
