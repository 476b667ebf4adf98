#include <faiss/HNSWTables.h>

#include <faiss/ForkSafety.h>
#include <faiss/ccd_scheduler/TaskGroup.h>
#include <faiss/hnsw_ccd/Table.h>
#include <faiss/impl/FaissAssert.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <mutex>
#include <utility>

namespace faiss {
namespace ccd {

namespace {

/// A fork() child searches its tables too (ForkSafety.h).
[[maybe_unused]] const bool fork_safe = (make_searches_fork_safe(), true);

using namespace hnsw;

/// Batch: the TaskCompletion of one search_batch_async call. It owns itself
/// (and, through `table`, the table) until its last query is done.
class Batch final : public TaskCompletion {
   public:
    Batch(std::shared_ptr<const HNSWTables::Table> table,
          const SearchParametersHNSW& params,
          idx_t n,
          HNSWBatchCallback done)
            : table_(std::move(table)),
              params_(params),
              remaining_(n),
              done_(std::move(done)) {}

    const HNSWTables::Table& table() const {
        return *table_;
    }
    const SearchParametersHNSW& params() const {
        return params_;
    }

    /// abandon: `count` queries that will never be submitted end with
    /// `error` (a failed submission).
    void abandon(idx_t count, std::exception_ptr error) noexcept {
        task_threw(error);
        count_down(count);
    }

   private:
    void task_threw(std::exception_ptr error) noexcept override {
        error_.keep(std::move(error));
    }
    void task_done() noexcept override {
        count_down(1);
    }
    void count_down(idx_t count) noexcept {
        // acq_rel: the last query sees every other query's writes (outputs,
        // the kept error) before it reports.
        if (remaining_.fetch_sub(count, std::memory_order_acq_rel) != count) {
            return;
        }
        std::unique_ptr<Batch> self(this);
        table_.reset(); // a removed table goes before the callback runs
        try {
            done_(error_.take());
        } catch (...) {
            // Nowhere to report it from a task's completion: dropped, as
            // HNSWTables.h says.
        }
    }

    std::shared_ptr<const HNSWTables::Table> table_;
    SearchParametersHNSW params_;
    std::atomic<idx_t> remaining_;
    HNSWBatchCallback done_;
    FirstError error_;
};

} // namespace

HNSWTables::HNSWTables(std::shared_ptr<Runtime> runtime)
        : traffic_sink(runtime ? runtime->traffic_sink() : nullptr),
          runtime_(std::move(runtime)) {
    FAISS_THROW_IF_NOT_MSG(runtime_, "HNSWTables: runtime is null");
}

HNSWTables::~HNSWTables() {
    std::unordered_map<uint32_t, std::shared_ptr<Table>> tables;
    {
        std::unique_lock<std::shared_mutex> lock(mutex_);
        tables.swap(tables_);
    }
    // Entries die here, or with their last query in flight.
}

void HNSWTables::add_table(
        uint32_t table_id,
        IndexHNSW* index,
        bool own_index,
        int ef_search) {
    FAISS_THROW_IF_NOT_MSG(index, "HNSWTables::add_table: index is null");
    FAISS_THROW_IF_NOT_MSG(
            table_id != table_of(kLocalMappingId),
            "HNSWTables::add_table: table id 0xffffffff is reserved");
    FAISS_THROW_IF_NOT_MSG(
            dynamic_cast<IndexHNSW2Level*>(index) == nullptr,
            "HNSWTables::add_table: IndexHNSW2Level is not supported");
    FAISS_THROW_IF_NOT_MSG(
            index->reconstruct_from_neighbors == nullptr,
            "HNSWTables::add_table: indexes with "
            "reconstruct_from_neighbors are not supported");
    FAISS_THROW_IF_NOT_MSG(
            index->storage,
            "HNSWTables::add_table: the index has no storage");
    FAISS_THROW_IF_NOT_FMT(
            ef_search == -1 || ef_search > 0,
            "HNSWTables::add_table: ef_search must be -1 or > 0 "
            "(got %d)",
            ef_search);
    std::unique_lock<std::shared_mutex> lock(mutex_);
    FAISS_THROW_IF_NOT_FMT(
            tables_.count(table_id) == 0,
            "HNSWTables::add_table: table id %u is already taken",
            table_id);
    for (const auto& [other_id, other] : tables_) {
        // Sharing one index between ids is fine, unless someone owns it:
        // it would be deleted while the other id still uses it.
        FAISS_THROW_IF_NOT_FMT(
                other->index != index || (!own_index && !other->own_index),
                "HNSWTables::add_table: this index is already table "
                "%u, and one of the two would own it",
                other_id);
    }
    // The entry owns the index only once it is stored: if make_shared or
    // emplace throws, the caller still owns it (and would delete it), so
    // the entry dying with the exception must not.
    auto entry = std::make_shared<Table>(
            table_id,
            index,
            /*own=*/false,
            ef_search == -1 ? index->hnsw.efSearch : ef_search);
    tables_.emplace(table_id, entry);
    entry->own_index = own_index; // under the lock: no query has it yet
}

std::shared_future<void> HNSWTables::remove_table(uint32_t table_id) {
    std::shared_ptr<Table> t;
    {
        std::unique_lock<std::shared_mutex> lock(mutex_);
        auto it = tables_.find(table_id);
        FAISS_THROW_IF_NOT_FMT(
                it != tables_.end(),
                "HNSWTables::remove_table: unknown table id %u",
                table_id);
        t = std::move(it->second);
        tables_.erase(it);
    }
    std::shared_future<void> released = t->released_future;
    t.reset(); // outside the lock: this may delete the index
    return released;
}

std::shared_ptr<HNSWTables::Table> HNSWTables::find(
        uint32_t table_id,
        const char* caller) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = tables_.find(table_id);
    FAISS_THROW_IF_NOT_FMT(
            it != tables_.end(),
            "%s: unknown table id %u",
            caller,
            table_id);
    return it->second;
}

bool HNSWTables::has_table(uint32_t table_id) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return tables_.count(table_id) != 0;
}

size_t HNSWTables::num_tables() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return tables_.size();
}

std::vector<uint32_t> HNSWTables::table_ids() const {
    std::vector<uint32_t> ids;
    {
        std::shared_lock<std::shared_mutex> lock(mutex_);
        ids.reserve(tables_.size());
        for (const auto& entry : tables_) {
            ids.push_back(entry.first);
        }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

int HNSWTables::dimension(uint32_t table_id) const {
    return find(table_id, "HNSWTables::dimension")->d;
}

void HNSWTables::set_ef_search(uint32_t table_id, int ef_search) {
    FAISS_THROW_IF_NOT_FMT(
            ef_search > 0,
            "HNSWTables::set_ef_search: ef_search must be > 0 (got %d)",
            ef_search);
    find(table_id, "HNSWTables::set_ef_search")
            ->ef_search.store(ef_search, std::memory_order_relaxed);
}

int HNSWTables::ef_search(uint32_t table_id) const {
    return find(table_id, "HNSWTables::ef_search")
            ->ef_search.load(std::memory_order_relaxed);
}

void HNSWTables::search(
        uint32_t table_id,
        idx_t n,
        const float* x,
        idx_t k,
        float* distances,
        idx_t* labels,
        const SearchParametersHNSW* params) const {
    search(table_id, n, x, -1, k, distances, labels, params);
}

void HNSWTables::search(
        uint32_t table_id,
        idx_t n,
        const float* x,
        int d,
        idx_t k,
        float* distances,
        idx_t* labels,
        const SearchParametersHNSW* params) const {
    const char* caller = "HNSWTables::search";
    FAISS_THROW_IF_NOT_FMT(
            n >= 0,
            "%s: n must be >= 0 (got %" PRId64 ")",
            caller,
            int64_t(n));
    check_k(k, caller);
    FAISS_THROW_IF_NOT_FMT(
            n == 0 || (x && distances && labels),
            "%s: null x, distances or labels with n > 0",
            caller);
    std::shared_ptr<Table> t = find(table_id, caller);
    if (d != -1) {
        check_dimension(*t, d, caller);
    }
    const SearchParametersHNSW p = resolve_params(*t, params, caller);
    if (n == 0) {
        return;
    }
    run_search(
            runtime_->pool(),
            hand_off,
            *t,
            n,
            x,
            k,
            p,
            distances,
            labels,
            traffic_sink);
}

std::future<HNSWQueryResult> HNSWTables::search_async(
        uint32_t table_id,
        std::vector<float> query,
        idx_t k,
        const SearchParametersHNSW* params) const {
    const char* caller = "HNSWTables::search_async";
    check_k(k, caller);
    std::shared_ptr<Table> t = find(table_id, caller);
    check_dimension(*t, int(query.size()), caller);
    const SearchParametersHNSW p = resolve_params(*t, params, caller);
    std::promise<HNSWQueryResult> promise;
    std::future<HNSWQueryResult> future = promise.get_future();
    if (runtime_->pool().current_worker() >= 0) {
        // A task of this pool asking for a future would most likely wait
        // on it, and on a pool whose other workers are busy (or that has
        // one) nobody would run the query: the worker runs it itself, and
        // the future is ready (issue 28, 5).
        try {
            promise.set_value(
                    query_result(*t, query.data(), k, p, traffic_sink));
        } catch (...) {
            promise.set_exception(std::current_exception());
        }
        return future;
    }
    run_async(
            runtime_->pool(),
            std::move(t),
            std::move(query),
            k,
            p,
            traffic_sink,
            [promise = std::move(promise)](
                    std::exception_ptr error,
                    HNSWQueryResult& result) mutable {
                if (error) {
                    promise.set_exception(error);
                } else {
                    promise.set_value(std::move(result));
                }
            });
    return future;
}

void HNSWTables::search_with_callback(
        uint32_t table_id,
        std::vector<float> query,
        idx_t k,
        HNSWCallback callback,
        const SearchParametersHNSW* params) const {
    const char* caller = "HNSWTables::search_with_callback";
    check_k(k, caller);
    FAISS_THROW_IF_NOT_FMT(callback, "%s: callback is empty", caller);
    std::shared_ptr<Table> t = find(table_id, caller);
    check_dimension(*t, int(query.size()), caller);
    const SearchParametersHNSW p = resolve_params(*t, params, caller);
    run_async(
            runtime_->pool(),
            std::move(t),
            std::move(query),
            k,
            p,
            traffic_sink,
            std::move(callback));
}

void HNSWTables::search_batch_async(
        uint32_t table_id,
        idx_t n,
        const float* x,
        int d,
        idx_t k,
        float* distances,
        idx_t* labels,
        HNSWBatchCallback done,
        const SearchParametersHNSW* params) const {
    const char* caller = "HNSWTables::search_batch_async";
    FAISS_THROW_IF_NOT_FMT(
            n > 0,
            "%s: n must be > 0 (got %" PRId64 ")",
            caller,
            int64_t(n));
    check_k(k, caller);
    FAISS_THROW_IF_NOT_FMT(
            x && distances && labels,
            "%s: null x, distances or labels",
            caller);
    FAISS_THROW_IF_NOT_FMT(done, "%s: callback is empty", caller);
    std::shared_ptr<Table> t = find(table_id, caller);
    check_dimension(*t, d, caller);
    const SearchParametersHNSW p = resolve_params(*t, params, caller);
    const MappingId id = make_mapping_id(t->id, 0);
    auto* batch = new Batch(std::move(t), p, n, std::move(done));
    TrafficSink* sink = traffic_sink;
    Pool& pool = runtime_->pool();
    for (idx_t q = 0; q < n; q++) {
        try {
            pool.submit(
                    id,
                    batch,
                    [batch, x, d, k, q, distances, labels, sink] {
                        run_query(
                                batch->table(),
                                x + q * d,
                                k,
                                batch->params(),
                                distances + q * k,
                                labels + q * k,
                                sink);
                    });
        } catch (...) {
            // Out of memory mid-batch: the queries already submitted run,
            // and the callback gets this error when they are done.
            batch->abandon(n - q, std::current_exception());
            return;
        }
    }
}

} // namespace ccd
} // namespace faiss
