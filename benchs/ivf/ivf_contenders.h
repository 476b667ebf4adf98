/**
 * ivf_contenders.h: the searchers bench_ivf compares, behind one interface,
 * all over one shared IndexIVF:
 *
 *   stock-pm0   IndexIVF::search, parallel_mode 0 (a batch is cut into one
 *               slice per OpenMP thread; a single query runs on one thread)
 *   stock-pm1   IndexIVF::search, parallel_mode 1 (each query's probed
 *               lists shared by the OpenMP team, schedule(dynamic))
 *   stock-pm0-t1  parallel_mode 0 with one OpenMP thread per calling
 *               thread: stock's best setting when clients already fill
 *               the cores
 *   pool-flat   IndexIVFCCD on a Pool with PolicyKind::flat_steal
 *   pool-ccd    IndexIVFCCD on a Pool with PolicyKind::ccd
 *   pool-ccd-nosplit  (diagnostic, single client and clients) pool-ccd
 *               with split_factor 0: every probed list is one task
 *   pool-ccd-spin     (diagnostic, single client only) pool-ccd on a pool
 *               whose idle workers spin for milliseconds before parking
 *   ccd         (bench_serving) the fork's own IndexIVF::search with
 *               parallel_mode = PARALLEL_MODE_CCD, as a user switches it,
 *               on the process's default runtime
 *
 * stock-pm0 and stock-pm1 use hardware_concurrency OpenMP threads in
 * every calling thread (each client thread starts its own team, as in a
 * server that calls FAISS from its request threads); the best stock figure
 * of a scenario is the best of the three. Each pool contender has one
 * pool, shared by all clients.
 */

#pragma once

#include "ivf_data.h"

#include <faiss/IndexIVFCCD.h>
#include <faiss/ccd_scheduler/Runtime.h>

#include <memory>
#include <string>

namespace bench {
namespace ivf {

class Contender {
   public:
    virtual ~Contender() = default;
    const std::string& name() const {
        return name_;
    }
    /// describe: one line for the report.
    virtual std::string describe() const = 0;
    /// prepare: before each measured run, from the driving thread (stock:
    /// sets the index's parallel_mode, which all stock contenders share).
    virtual void prepare() {}
    /// client_init: once in every thread that will call search().
    virtual void client_init() const {}
    /// search: k nearest neighbours of n queries; any number of threads.
    virtual void search(
            idx_t n,
            const float* x,
            idx_t k,
            float* distances,
            idx_t* labels) const = 0;
    /// pool: the pool behind this contender, or nullptr.
    virtual const faiss::ccd::Pool* pool() const {
        return nullptr;
    }
    /// ivf_ccd: the IndexIVFCCD of a pool contender, or nullptr.
    virtual const faiss::ccd::IndexIVFCCD* ivf_ccd() const {
        return nullptr;
    }

   protected:
    explicit Contender(std::string name) : name_(std::move(name)) {}

   private:
    std::string name_;
};

/// make_stock: stock FAISS with `omp_threads` OpenMP threads per caller.
std::unique_ptr<Contender>
make_stock(faiss::IndexIVF* index, int parallel_mode, int omp_threads);

/// make_ccd_mode: the fork's IndexIVF in PARALLEL_MODE_CCD on the default
/// runtime (its prepare() sets the index's parallel_mode).
std::unique_ptr<Contender> make_ccd_mode(faiss::IndexIVF* index);

/// make_ccd_mode_on: the same search on `runtime`, given per call as a
/// user does (SearchParametersIVFCCD::runtime), under `name`; e.g. a
/// runtime whose pool admits its callers first come, first served
/// (PoolOptions::fifo_callers).
std::unique_ptr<Contender> make_ccd_mode_on(
        const std::string& name,
        faiss::IndexIVF* index,
        std::shared_ptr<faiss::ccd::Runtime> runtime,
        const std::string& how);

/// make_pool: IndexIVFCCD over `index` on `runtime`'s pool; split = false sets
/// split_factor 0 (no list is cut into chunks). spin_rounds: the pool's
/// PoolOptions::spin_rounds if it was set, for the description only (a
/// Pool does not expose its options).
std::unique_ptr<Contender> make_pool(
        const std::string& name,
        faiss::IndexIVF* index,
        std::shared_ptr<faiss::ccd::Runtime> runtime,
        bool split,
        int spin_rounds = -1);

/// SplitAnalysis: what IndexIVFCCD's list splitting does to the scan tasks
/// of a query set (computed from the coarse assignment and the index's
/// split parameters, the same rule IndexIVFCCD applies).
struct SplitAnalysis {
    size_t queries = 0;
    double split_threshold = 0; ///< lists longer than this are cut
    double chunk = 0;           ///< codes per chunk of a cut list
    double lists_per_query = 0; ///< probed non-empty lists
    double tasks_per_query = 0; ///< scan tasks after splitting
    double split_lists_per_query = 0;
    double codes_per_query = 0; ///< vectors scanned
    /// Largest single task over the query's codes, mean over queries: with
    /// W workers a query cannot finish before its largest task, so a value
    /// above 1/W caps its speed-up below W.
    double largest_task_share_nosplit = 0;
    double largest_task_share_split = 0;
    /// Mean over queries of codes / max(codes / W, largest task): the
    /// speed-up over one worker that W perfectly balanced workers could
    /// reach without and with splitting.
    double ideal_speedup_nosplit = 0;
    double ideal_speedup_split = 0;
    int workers = 0;
};

SplitAnalysis analyse_split(
        const faiss::IndexIVF& index,
        const faiss::ccd::IndexIVFCCD& ccd,
        size_t nq,
        const float* queries,
        int workers);

} // namespace ivf
} // namespace bench
