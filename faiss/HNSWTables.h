/**
 * HNSWTables: many faiss::IndexHNSW tables added by id, searched
 * through one shared CCD-aware Pool, one query per task (inter-query
 * parallelism).
 *
 * Every query of table t is a task keyed by MappingId(t, 0) that runs to
 * completion on one worker: under the pool's `ccd` policy all queries of a
 * table go to the CCD that the placement gives t, so the table's hot graph
 * nodes stay in that CCD's L3. Under `round_robin` this is the production
 * baseline (V0: any query on any core, no stealing); under `flat_steal`,
 * topology-blind work stealing (V1).
 *
 * Results equal IndexHNSW::search run with one OpenMP thread on the same
 * index and SearchParametersHNSW: same labels, same distances. Each query
 * counts the graph nodes it touched (CountingDistanceComputer: distance
 * computations between the query and stored vectors) and reports
 *   items = touched, bytes = touched * (d * sizeof(float) + M * 4)
 * to `traffic_sink`, M being the index's HNSW M (links per node above
 * level 0). This is the paper's traffic model for placement, not a byte
 * count: SQ codes are smaller than d floats, level-0 lists hold 2M links.
 *
 * efSearch. A query uses, in this order: the efSearch of the call's
 * SearchParametersHNSW, the table's efSearch (set_ef_search), the index's
 * hnsw.efSearch at registration. It is always passed to FAISS as a
 * SearchParametersHNSW (check_relative_distance from the call, else from
 * the index). Results are those of IndexHNSW::search with the same
 * parameters. FAISS 1.7.3 caveat: its HNSW::search sizes the level-0
 * candidate queue from the index's own hnsw.efSearch and takes only the
 * expansion limit from the parameters. So an efSearch below the index's
 * cuts the search short, while one above it has little or no effect (on
 * our test data: none at all); stock IndexHNSW::search behaves the same.
 * To search wider, raise index->hnsw.efSearch before adding the table. Newer
 * FAISS takes both from the parameters.
 *
 * Table lifetime. Tables are held by shared_ptr entries; every submitted
 * query holds its table's entry until it has finished. remove_table()
 * removes the id at once (later calls naming it fail with "unknown table
 * id"), while queries already submitted run to completion on the table.
 * An owned index is deleted exactly once, when the last of them drops it
 * (or at once when none is in flight). remove_table() returns a
 * future that becomes ready at that moment: a caller that does not own
 * the index waits on it before freeing the index. Do not wait on it from a
 * task of the pool: the queries it waits for may be queued behind it.
 *
 * Not supported (add_table refuses them): IndexHNSW2Level (its own
 * search) and indexes with reconstruct_from_neighbors.
 *
 * Thread contract: every method from any thread, concurrently, including
 * from tasks of the pool (search() helps the pool while it waits). The
 * object must outlive the calls made on it (a synchronous search() in
 * particular), not the queries it submitted: those hold only their
 * table, so it may be destroyed with asynchronous queries in flight. As in
 * FAISS, an added index must not be modified (add, reset, changes to
 * its hnsw fields) while queries on it may run. `traffic_sink` is read
 * when a query is submitted: set it before searching; the sink must
 * outlive every query submitted while it was set.
 */

#pragma once

#include <faiss/IndexHNSW.h>
#include <faiss/ccd_scheduler/MappingId.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/ccd_scheduler/TrafficSink.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace faiss {
namespace ccd {

/// HNSWQueryResult: the answer to one asynchronous query.
struct HNSWQueryResult {
    using idx_t = Index::idx_t;
    std::vector<float> distances; ///< k values, best first
    std::vector<idx_t> labels;    ///< k labels, -1 past the last result
    uint64_t touched = 0;         ///< nodes touched (distance computations)
};

/// HNSWCallback: receives a query's result on the pool worker that ran it.
/// `error` is null on success; otherwise `result` is empty. An exception
/// escaping the callback is dropped by the pool (and counted in its
/// WorkerStats::uncaught_exceptions).
using HNSWCallback =
        std::function<void(std::exception_ptr error, HNSWQueryResult& result)>;

/// HNSWBatchCallback: told once that every query of a batch is done, on the
/// pool worker that finished the last one; `error` is the first error of
/// the batch, or null. An exception escaping it is dropped.
using HNSWBatchCallback = std::function<void(std::exception_ptr error)>;

class HNSWTables {
   public:
    using idx_t = Index::idx_t;

    /// Receives (MappingId(table, 0), nodes touched, bytes) once per query:
    /// the runtime's monitor unless set otherwise; may be null. Not owned.
    TrafficSink* traffic_sink;

    /// hand_off: where the queries of a synchronous search() run. -1 (the
    /// default): a cost decision; the calling thread runs them itself
    /// (with pool workers helping a batch whose measured cost pays for
    /// them) when it runs on the table's CCD or the machine has one CCD,
    /// since moving a query costs two context switches and buys no
    /// locality there; otherwise they go to the table's CCD, one task per
    /// query. 1: always one task per query (where the pool's policies
    /// differ). 0: always in the calling thread, with helpers as for -1.
    /// Asynchronous searches always run on the pool.
    int hand_off = -1;

    /// HNSWTables: the runtime is kept alive by the tables.
    explicit HNSWTables(std::shared_ptr<Runtime> runtime);
    /// ~HNSWTables: removes every table. Queries in flight finish on their
    /// tables (they do not need this object any more).
    ~HNSWTables();

    HNSWTables(const HNSWTables&) = delete;
    HNSWTables& operator=(const HNSWTables&) = delete;

    /// add_table: make `index` searchable as `table_id`. With
    /// `own_index` the tables delete it once it is removed; on error
    /// (exception) ownership is not taken. `ef_search` -1: the index's
    /// hnsw.efSearch.
    void add_table(
            uint32_t table_id,
            IndexHNSW* index,
            bool own_index,
            int ef_search = -1);

    /// remove_table: see "Table lifetime" above. The future is ready
    /// once no query uses the table any more (and an owned index has been
    /// deleted).
    std::shared_future<void> remove_table(uint32_t table_id);

    bool has_table(uint32_t table_id) const;
    size_t num_tables() const;
    /// table_ids: the ids of the tables, ascending.
    std::vector<uint32_t> table_ids() const;
    /// dimension: the table's d.
    int dimension(uint32_t table_id) const;

    /// set_ef_search: the table's default efSearch from now on (> 0).
    void set_ef_search(uint32_t table_id, int ef_search);
    int ef_search(uint32_t table_id) const;

    /// search: n queries (x: n * dimension(table_id) floats), each its own
    /// task; blocks until all are done. distances and labels: n * k.
    void search(
            uint32_t table_id,
            idx_t n,
            const float* x,
            idx_t k,
            float* distances,
            idx_t* labels,
            const SearchParametersHNSW* params = nullptr) const;

    /// search: the same, with the caller's dimension `d` of x checked
    /// against the table's.
    void search(
            uint32_t table_id,
            idx_t n,
            const float* x,
            int d,
            idx_t k,
            float* distances,
            idx_t* labels,
            const SearchParametersHNSW* params = nullptr) const;

    /// search_async: one query (query.size() == dimension(table_id)),
    /// returns at once. Input errors throw here; errors while searching
    /// arrive through the future. `params` is copied; its `sel`, if any,
    /// must outlive the query. Called by a task of this tables' pool, it
    /// runs the query in that task and returns a ready future: a worker
    /// waiting on a query it queued could wait for ever (one worker, or
    /// all of them waiting).
    std::future<HNSWQueryResult> search_async(
            uint32_t table_id,
            std::vector<float> query,
            idx_t k,
            const SearchParametersHNSW* params = nullptr) const;

    /// search_with_callback: as search_async, the result (or the error)
    /// going to `callback` on the worker that ran the query.
    void search_with_callback(
            uint32_t table_id,
            std::vector<float> query,
            idx_t k,
            HNSWCallback callback,
            const SearchParametersHNSW* params = nullptr) const;

    /// search_batch_async: n queries (x: n * d floats, d checked against
    /// the table's), each its own task; returns at once. Results go to
    /// distances and labels (n * k), which, like x and `params->sel`, must
    /// stay valid until `done` has been called: once, when every query has
    /// finished, with the first error or null. Input errors throw here and
    /// then nothing is submitted.
    void search_batch_async(
            uint32_t table_id,
            idx_t n,
            const float* x,
            int d,
            idx_t k,
            float* distances,
            idx_t* labels,
            HNSWBatchCallback done,
            const SearchParametersHNSW* params = nullptr) const;

    const std::shared_ptr<Runtime>& runtime() const {
        return runtime_;
    }

    /// Table: one table, shared by the registry and by every
    /// query in flight on it (defined in HNSWTables.cpp).
    struct Table;

   private:
    /// find: the table's entry, or a FaissException naming the id.
    std::shared_ptr<Table> find(uint32_t table_id, const char* caller) const;

    std::shared_ptr<Runtime> runtime_;
    mutable std::shared_mutex mutex_; ///< guards tables_
    std::unordered_map<uint32_t, std::shared_ptr<Table>> tables_;
};

} // namespace ccd
} // namespace faiss
