#include <faiss/hnsw_ccd/Table.h>

#include <faiss/CountingDistanceComputer.h>
#include <faiss/SharedVisitedTable.h>
#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/HelperPlan.h>
#include <faiss/ccd_scheduler/TaskGroup.h>
#include <faiss/ccd_scheduler/WorkShare.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/utils/Heap.h>

#include <cinttypes>
#include <climits>

namespace faiss {
namespace ccd {
namespace hnsw {

namespace {

/// visited_table: the calling thread's VisitedTable, shared by every
/// table it searches (SharedVisitedTable.h), ready for a query of `index`.
VisitedTable& visited_table(const IndexHNSW& index) {
    thread_local SharedVisitedTable vt;
    const HNSW& hnsw = index.hnsw;
    const int advances = hnsw.upper_beam > 1 ? hnsw.max_level + 1 : 1;
    return vt.for_query(size_t(index.ntotal), advances);
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

} // namespace

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

} // namespace hnsw
} // namespace ccd
} // namespace faiss
