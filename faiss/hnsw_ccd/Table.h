/**
 * Table: one table of HNSWTables (faiss/HNSWTables.h) and how one query
 * of it runs: whole, on the calling thread (run_query, as IndexHNSW::search
 * runs one query of its batch), a synchronous batch where its measured
 * cost says (run_search), or one query as a task of its own (run_async).
 *
 * Thread contract: a Table is shared by the registry and every query in
 * flight (shared_ptr); its fields are fixed once added, but ef_search and
 * ns_per_query, which are atomics (relaxed: settings and an estimate, no
 * data hangs on them).
 */

#pragma once

#include <faiss/HNSWTables.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/impl/HNSW.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <utility>
#include <vector>

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

namespace hnsw {

using idx_t = Index::idx_t;

/// run_query: one query, whole, on the calling thread; what
/// IndexHNSW::search does for one query of its batch in FAISS 1.7.3.
/// Returns the nodes touched (and records them to `sink`, if any).
uint64_t run_query(
        const HNSWTables::Table& t,
        const float* x,
        idx_t k,
        const SearchParametersHNSW& params,
        float* distances,
        idx_t* labels,
        TrafficSink* sink);

/// query_result: run_query into a result of its own (throws as it does).
HNSWQueryResult query_result(
        const HNSWTables::Table& t,
        const float* x,
        idx_t k,
        const SearchParametersHNSW& params,
        TrafficSink* sink);

/// resolve_params: the parameters a query passes to HNSW::search (see
/// "efSearch" in HNSWTables.h).
SearchParametersHNSW resolve_params(
        const HNSWTables::Table& t,
        const SearchParametersHNSW* params,
        const char* caller);

/// check_k, check_dimension: a FaissException naming `caller` and the
/// bad value.
void check_k(idx_t k, const char* caller);
void check_dimension(const HNSWTables::Table& t, int d, const char* caller);

/// run_search: the synchronous batch. Where the queries run is a cost
/// decision. Moving a query to its table's CCD costs a hand-off (two
/// context switches) and buys locality only when the caller runs on
/// another CCD: so a caller on the table's CCD, or on a one-CCD machine,
/// runs the queries itself, with helpers when the batch's measured cost
/// pays for them (plan_helpers), while a caller on another CCD (or on a
/// CPU the topology does not know, as under an emulated topology) hands
/// the batch to the table's CCD. hand_off: HNSWTables::hand_off.
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
        TrafficSink* sink);

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

} // namespace hnsw
} // namespace ccd
} // namespace faiss
