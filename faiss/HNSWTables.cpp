#include <faiss/HNSWTables.h>

#include <faiss/CountingDistanceComputer.h>
#include <faiss/ForkSafety.h>
#include <faiss/SharedVisitedTable.h>
#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/HelperPlan.h>
#include <faiss/ccd_scheduler/TaskGroup.h>
#include <faiss/ccd_scheduler/WorkShare.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/utils/Heap.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <mutex>
#include <utility>

namespace faiss {
namespace ccd {

/// Table: an added index and what its queries need besides it. The
/// registry holds one reference, every query in flight another; the last
/// one to let go deletes an owned index and fulfils `released`.
struct HNSWTables::Table {
    uint32_t id;
    IndexHNSW* index;
    bool own_index;
    int d;
    uint64_t bytes_per_node; ///< d * sizeof(float) + M * sizeof(link)
    std::atomic<int> ef_search;
    /// ns_per_query: the measured cost of one query run alone (moving
    /// average; 0 before the first synchronous batch).
    std::atomic<double> ns_per_query{0};
    std::promise<void> released;
    std::shared_future<void> released_future;

    Table(uint32_t id_in, IndexHNSW* index_in, bool own, int ef)
            : id(id_in),
              index(index_in),
              own_index(own),
              d(index_in->d),
              bytes_per_node(
                      uint64_t(index_in->d) * sizeof(float) +
                      uint64_t(links_per_node(index_in->hnsw)) *
                              sizeof(HNSW::storage_idx_t)),
              ef_search(ef),
              released_future(released.get_future().share()) {}

    ~Table() {
        if (own_index) {
            delete index;
        }
        released.set_value();
    }

    /// links_per_node: the HNSW's M (links per node above level 0; level 0
    /// has 2M by FAISS's default).
    static int links_per_node(const HNSW& hnsw) {
        if (hnsw.cum_nneighbor_per_level.size() > 2) {
            return hnsw.nb_neighbors(1);
        }
        return std::max(1, hnsw.nb_neighbors(0) / 2);
    }
};

namespace {

/// A fork() child searches its tables too (ForkSafety.h).
[[maybe_unused]] const bool fork_safe = (make_searches_fork_safe(), true);

using idx_t = Index::idx_t;

/// visited_table: the calling thread's VisitedTable, shared by every
/// table it searches (SharedVisitedTable.h), ready for a query of `index`.
VisitedTable& visited_table(const IndexHNSW& index) {
    thread_local SharedVisitedTable vt;
    const HNSW& hnsw = index.hnsw;
    const int advances = hnsw.upper_beam > 1 ? hnsw.max_level + 1 : 1;
    return vt.for_query(size_t(index.ntotal), advances);
}

/// run_query: one query, whole, on the calling thread; what
/// IndexHNSW::search does for one query of its batch in FAISS 1.7.3.
/// Returns the nodes touched.
uint64_t run_query(
        const HNSWTables::Table& t,
        const float* x,
        idx_t k,
        const SearchParametersHNSW& params,
        float* distances,
        idx_t* labels,
        TrafficSink* sink) {
    const IndexHNSW& index = *t.index;
    std::unique_ptr<DistanceComputer> base(
            index.storage->get_distance_computer());
    // FAISS's HNSW searches for the smallest value: 1.7.3 negates inner
    // products on the way in (storage_distance_computer) and back at the
    // end of IndexHNSW::search; so do we.
    CountingDistanceComputer dis(
            base.get(),
            index.storage->metric_type == METRIC_INNER_PRODUCT);
    dis.set_query(x);
    VisitedTable& vt = visited_table(index);
    maxheap_heapify(k, distances, labels);
    index.hnsw.search(dis, int(k), labels, distances, vt, &params);
    maxheap_reorder(k, distances, labels);
    if (index.metric_type == METRIC_INNER_PRODUCT) {
        for (idx_t j = 0; j < k; j++) {
            distances[j] = -distances[j];
        }
    }
    if (sink != nullptr) {
        sink->record(
                make_mapping_id(t.id, 0),
                dis.ndis,
                dis.ndis * t.bytes_per_node);
    }
    return dis.ndis;
}

/// query_result: run_query into a result of its own (throws as it does).
HNSWQueryResult query_result(
        const HNSWTables::Table& t,
        const float* x,
        idx_t k,
        const SearchParametersHNSW& params,
        TrafficSink* sink) {
    HNSWQueryResult result;
    result.distances.resize(k);
    result.labels.resize(k);
    result.touched = run_query(
            t,
            x,
            k,
            params,
            result.distances.data(),
            result.labels.data(),
            sink);
    return result;
}

/// resolve_params: the parameters a query passes to HNSW::search (see
/// "efSearch" in HNSWTables.h).
SearchParametersHNSW resolve_params(
        const HNSWTables::Table& t,
        const SearchParametersHNSW* params,
        const char* caller) {
    SearchParametersHNSW p;
    if (params != nullptr) {
        p.sel = params->sel;
        p.efSearch = params->efSearch;
        p.check_relative_distance = params->check_relative_distance;
    } else {
        p.efSearch = t.ef_search.load(std::memory_order_relaxed);
        p.check_relative_distance = t.index->hnsw.check_relative_distance;
    }
    FAISS_THROW_IF_NOT_FMT(
            p.efSearch > 0,
            "%s: efSearch must be > 0 (got %d)",
            caller,
            p.efSearch);
    return p;
}

void check_k(idx_t k, const char* caller) {
    FAISS_THROW_IF_NOT_FMT(
            k > 0 && k <= INT_MAX,
            "%s: k must be in 1..INT_MAX (got %" PRId64 ")",
            caller,
            int64_t(k));
}

void check_dimension(const HNSWTables::Table& t, int d, const char* caller) {
    FAISS_THROW_IF_NOT_FMT(
            d == t.d,
            "%s: queries have dimension %d, table %u has dimension %d",
            caller,
            d,
            t.id,
            t.d);
}

/// QueryShare: the queries of a synchronous batch as WorkShare units.
struct QueryShare final : RunnerFactory {
    const HNSWTables::Table& t;
    idx_t k;
    const float* x;
    const SearchParametersHNSW& p;
    float* distances;
    idx_t* labels;
    TrafficSink* sink;

    struct Runner final : UnitRunner {
        const QueryShare& s;
        explicit Runner(const QueryShare& share) : s(share) {}
        void run(int64_t q) override {
            run_query(
                    s.t,
                    s.x + q * s.t.d,
                    s.k,
                    s.p,
                    s.distances + q * s.k,
                    s.labels + q * s.k,
                    s.sink);
        }
    };

    QueryShare(
            const HNSWTables::Table& t_in,
            idx_t k_in,
            const float* x_in,
            const SearchParametersHNSW& p_in,
            float* d_in,
            idx_t* l_in,
            TrafficSink* sink_in)
            : t(t_in),
              k(k_in),
              x(x_in),
              p(p_in),
              distances(d_in),
              labels(l_in),
              sink(sink_in) {}

    std::unique_ptr<UnitRunner> make_runner() const override {
        return std::unique_ptr<UnitRunner>(new Runner(*this));
    }
};

/// run_search: the synchronous batch. Where the queries run is a cost
/// decision. Moving a query to its table's CCD costs a hand-off (two
/// context switches) and buys locality only when the caller runs on
/// another CCD: so a caller on the table's CCD, or on a one-CCD machine,
/// runs the queries itself, with helpers when the batch's measured cost
/// pays for them (plan_helpers), while a caller on another CCD (or on a
/// CPU the topology does not know, as under an emulated topology) hands
/// the batch to the table's CCD.
void run_search(
        Pool& pool,
        int hand_off,
        HNSWTables::Table& t,
        idx_t n,
        const float* x,
        idx_t k,
        const SearchParametersHNSW& p,
        float* distances,
        idx_t* labels,
        TrafficSink* sink) {
    Pool::CallerScope scope(pool);
    const Topology& topo = pool.topology();
    ShareGroup group;
    group.id = make_mapping_id(t.id, 0);
    group.begin = 0;
    group.end = n;
    const int table_ccd = pool.pick_ccd(group.id);
    const int caller_ccd = pool.caller_ccd();
    const bool local = hand_off == 0 ||
            (hand_off < 0 &&
             (topo.num_ccds() == 1 ||
              (caller_ccd >= 0 && (table_ccd < 0 || table_ccd == caller_ccd))));
    if (!local) {
        // Handed off: one task per query on the table's CCD.
        const HNSWTables::Table* tp = &t;
        const SearchParametersHNSW* pp = &p;
        TaskGroup tasks(pool);
        for (idx_t q = 0; q < n; q++) {
            tasks.submit(group.id, [=] {
                run_query(
                        *tp,
                        x + q * tp->d,
                        k,
                        *pp,
                        distances + q * k,
                        labels + q * k,
                        sink);
            });
        }
        tasks.wait();
        return;
    }
    if (n == 1) {
        // One query: nobody could help; no share to set up.
        run_query(t, x, k, p, distances, labels, sink);
        return;
    }
    HelperPlanInput in;
    in.work_ns = {double(n) * t.ns_per_query.load(std::memory_order_relaxed)};
    in.group_ccd = {table_ccd};
    for (int c = 0; c < topo.num_ccds(); c++) {
        in.ccd_workers.push_back(topo.ccd_size(c));
    }
    in.caller_ccd = caller_ccd;
    in.other_callers = scope.others();
    in.handoff_ns = pool.handoff_ns();
    in.units = {int64_t(n)};
    group.helpers = plan_helpers(in)[0];
    const QueryShare share(t, k, x, p, distances, labels, sink);
    const int64_t t0 = steady_now_ns();
    run_shared(pool, {group}, 0, share);
    // The batch's wall time over its queries, per participant: the cost
    // of one query run alone, for the next plan (a moving average).
    const double participants = 1.0 + group.helpers;
    const double sample = double(steady_now_ns() - t0) *
            std::min<double>(participants, n) / n;
    const double old = t.ns_per_query.load(std::memory_order_relaxed);
    t.ns_per_query.store(
            old > 0 ? old + 0.25 * (sample - old) : sample,
            std::memory_order_relaxed);
}

/// run_async: one query as a task on its own; `deliver(error, result)` is
/// called once, on the worker, with the result or the exception.
template <class Deliver>
void run_async(
        Pool& pool,
        std::shared_ptr<const HNSWTables::Table> t,
        std::vector<float> query,
        idx_t k,
        const SearchParametersHNSW& p,
        TrafficSink* sink,
        Deliver deliver) {
    const MappingId id = make_mapping_id(t->id, 0);
    pool.submit(
            id,
            [t = std::move(t),
             query = std::move(query),
             k,
             p,
             sink,
             deliver = std::move(deliver)]() mutable {
                HNSWQueryResult result;
                std::exception_ptr error;
                try {
                    result = query_result(*t, query.data(), k, p, sink);
                } catch (...) {
                    error = std::current_exception();
                    result = HNSWQueryResult();
                }
                // The table is no longer needed: let a removed one go
                // before the caller's continuation runs.
                t.reset();
                deliver(error, result);
            });
}

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
