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
            params,
            "HNSWTables: params must be a faiss.SearchParametersHNSW");
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

} // namespace

HNSWTablesHandle::HNSWTablesHandle(PoolHandle& pool)
        : tables_(std::make_unique<HNSWTables>(pool.runtime())) {}

void HNSWTablesHandle::add_table(
        uint32_t table_id,
        uintptr_t index_address,
        int ef_search) {
    auto* hnsw =
            dynamic_cast<IndexHNSW*>(reinterpret_cast<Index*>(index_address));
    FAISS_THROW_IF_NOT_MSG(
            hnsw,
            "HNSWTables.add_table: index is not a faiss.IndexHNSW");
    tables_->add_table(table_id, hnsw, /*own_index=*/false, ef_search);
}

void HNSWTablesHandle::remove_table(uint32_t table_id) {
    tables_->remove_table(table_id).wait();
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
    std::shared_ptr<Completions::State> state = completions.state();
    auto report = [state, ticket](std::exception_ptr error) {
        Completion c;
        c.ticket = ticket;
        c.ok = error == nullptr;
        if (error) {
            c.error = message_of(error);
        }
        state->push(std::move(c));
    };
    // Outstanding from before the first query can finish; input errors
    // throw before any is submitted, and the ticket is withdrawn.
    state->begin();
    try {
        tables_->search_batch_async(
                table_id,
                n,
                reinterpret_cast<const float*>(x),
                d,
                k,
                reinterpret_cast<float*>(distances),
                reinterpret_cast<Index::idx_t*>(labels),
                report,
                params);
    } catch (...) {
        state->cancel();
        throw;
    }
}

} // namespace python
} // namespace ccd
} // namespace faiss
