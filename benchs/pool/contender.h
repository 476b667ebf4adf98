/**
 * Contender: one runtime that bench_pool measures, behind the three things
 * the benchmark asks of each. Every contender runs the same workloads
 * (workload.h); how it maps them onto its own API is in its own file:
 *
 *   contender_pool.cpp    pool-ccd, pool-flat  (faiss::ccd::Pool)
 *   contender_mutex.cpp   mutex-queue          (central_queue.h)
 *   contender_openmp.cpp  openmp               (GCC's libgomp tasks)
 *   contender_tbb.cpp     tbb                  (oneTBB task_group/arena)
 *
 * A contender owns its threads for its lifetime. The driver keeps all of
 * them alive and lets them take turns, one repetition each, pausing between
 * turns until the previous contender's threads are asleep; so idle runtimes
 * do not compete for the cores, and outside load hits every contender alike.
 */

#pragma once

#include "workload.h"

#include <faiss/ccd_scheduler/PoolStats.h>
#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bench {

/// Probe: one latency sample. The driver stamps `submitted_ns` just before
/// it submits; the task's first action is start().
struct Probe {
    int64_t submitted_ns = 0;
    std::atomic<int64_t> started_ns{0};

    void start() {
        // release: the driver, spinning on started_ns, sees the stamp.
        started_ns.store(now_ns(), std::memory_order_release);
    }
};

/// task_key: the Tally key of task i of submitter t in scenario (a); unique
/// over every task of a run.
inline uint64_t task_key(int submitter, int64_t i) {
    return (uint64_t(submitter) << 40) + uint64_t(i) + 1;
}

class Contender {
   public:
    virtual ~Contender() = default;

    /// name: as printed in every table ("pool-ccd", "tbb", ...).
    virtual std::string name() const = 0;
    /// describe: one line on how this contender runs the workloads.
    virtual std::string describe() const = 0;

    /// independent: scenario (a) throughput. `submitters` threads each
    /// submit `per_submitter` tiny_task()s with keys task_key(t, i), and
    /// each waits for its own. Returns the seconds from the first submit to
    /// the moment the last task is known to be done.
    virtual double independent(int submitters, int64_t per_submitter) = 0;

    /// has_probe: whether submit_probe() is meaningful for this runtime.
    virtual bool has_probe() const {
        return true;
    }
    /// submit_probe: submit one task whose first action is probe->start().
    virtual void submit_probe(Probe* probe) = 0;

    /// tree: scenario (b). Runs every node of `tree` as one task (the root
    /// included), children forked by their parent; returns when all ran.
    virtual void tree(const Tree& tree) = 0;

    /// pool_stats: the pool's counters, for contenders that are a Pool.
    virtual bool pool_stats(faiss::ccd::PoolStats* /*out*/) const {
        return false;
    }
};

/// make_pool_contender: "pool-<policy>"; with pin_workers = false (the
/// pool's default is true) "pool-<policy>-unpinned".
std::unique_ptr<Contender> make_pool_contender(
        const faiss::ccd::Topology& topology,
        faiss::ccd::PolicyKind policy,
        bool pin_workers = true);
std::unique_ptr<Contender> make_mutex_queue_contender(int workers);
std::unique_ptr<Contender> make_openmp_contender(int workers);
std::unique_ptr<Contender> make_tbb_contender(int workers);

/**
 * run_submitters: starts n threads, lets them go at once, and runs body(t)
 * on thread t. Returns the seconds from the release to the end of the last
 * body. Thread start-up is outside the measured interval.
 */
template <class Body>
double run_submitters(int n, Body body) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<int64_t> end_ns(n, 0);
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (int t = 0; t < n; t++) {
        threads.emplace_back([&, t] {
            ready.fetch_add(1, std::memory_order_relaxed);
            // acquire: pairs with the release store of `go`.
            while (!go.load(std::memory_order_acquire)) {
                std::this_thread::yield();
            }
            body(t);
            end_ns[t] = now_ns();
        });
    }
    while (ready.load(std::memory_order_relaxed) < n) {
        std::this_thread::yield();
    }
    const int64_t start = now_ns();
    go.store(true, std::memory_order_release);
    for (std::thread& th : threads) {
        th.join();
    }
    int64_t end = start;
    for (int64_t e : end_ns) {
        end = e > end ? e : end;
    }
    return double(end - start) * 1e-9;
}

} // namespace bench
