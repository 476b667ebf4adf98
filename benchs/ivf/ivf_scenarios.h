/**
 * ivf_scenarios.h: the three ways bench_ivf drives a contender.
 *
 *   single   one client thread sends single queries back to back; each
 *            query's latency is timed (steady_clock around search()).
 *   clients  C client threads send single queries in a closed loop, taking
 *            the next query number from a shared counter, so the queries
 *            go out in the same order for every contender; QPS over the
 *            whole run (first send to last answer) and per-query latency.
 *   batch    one search() call with every query; QPS.
 *   open     open loop: queries arrive at Poisson times (a fixed seed) at
 *            a given rate, whatever the answers' pace; `senders` threads
 *            take the next arrival in order, sleep until its time and send
 *            it. A query's latency runs from its arrival time, not from
 *            when a sender was free, so a backlog counts in full (no
 *            coordinated omission).
 *
 * Every scenario writes each query's answer into its slot of an Answers
 * (k results per query), for the equality check and recall.
 */

#pragma once

#include "ivf_contenders.h"

#include <faiss/ccd_scheduler/PoolStats.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bench {
namespace ivf {

/// Latency: per-query latencies of one run, in milliseconds.
struct Latency {
    size_t samples = 0;
    double p50 = 0, p99 = 0, p999 = 0, mean = 0, max = 0;
};

Latency summarize(std::vector<double> ms);

struct Answers {
    std::vector<float> distances;
    std::vector<idx_t> labels;
    void resize(size_t nq, int k) {
        distances.assign(nq * k, 0);
        labels.assign(nq * k, -1);
    }
};

/// RunResult: one contender, one scenario, one round; a round may be
/// measured in several blocks of queries (add() sums them, then
/// finalize() computes the rates and the latency summary).
struct RunResult {
    double seconds = 0;
    size_t queries = 0;
    double qps = 0;
    Latency latency; ///< empty for batch
    /// CPU used during the run as shares of the whole machine (all cores):
    /// this process (getrusage) and everything else (/proc/stat busy time
    /// minus ours; -1 where unknown). Others' share is the noise indicator.
    double own_cpu = -1;
    double other_cpu = -1;
    bool has_pool = false;
    faiss::ccd::PoolStats pool_delta; ///< counters over the run
    std::vector<double> samples_ms;   ///< per-query latencies (not in JSON)

    /// add: a block of the same round, measured after the ones before.
    void add(const RunResult& block);
    /// finalize: qps and latency from the sums and samples.
    void finalize();
};

/// Workload: queries [begin, end) of `queries` (d floats each), k results.
struct Workload {
    const float* queries = nullptr;
    int d = 0;
    size_t begin = 0;
    size_t end = 0;
    int k = 0;
};

/// The runners measure one block: w's queries, answers into their slots
/// of `out`. Call RunResult::finalize() (or add() blocks, then finalize).
RunResult run_single(const Contender& c, const Workload& w, Answers* out);
RunResult
run_clients(const Contender& c, const Workload& w, int nclients, Answers* out);
RunResult run_batch(const Contender& c, const Workload& w, Answers* out);
/// run_batches: w's queries in consecutive search() calls of `batch`
/// queries (the last may be shorter), one calling thread.
RunResult
run_batches(const Contender& c, const Workload& w, size_t batch, Answers* out);
/// run_open_loop: see "open" above; rate in queries per second (> 0),
/// senders >= 1 (enough that a free one is always there below saturation).
RunResult run_open_loop(
        const Contender& c,
        const Workload& w,
        double rate,
        int senders,
        uint64_t seed,
        Answers* out);

/// warm_up: a few single queries and a small batch, untimed, so that lazy
/// set-up (OpenMP teams, pool workers, page faults) is not in the numbers.
void warm_up(const Contender& c, const Workload& w);

/// Mismatch: how a contender's answers differ from the reference's.
struct Mismatch {
    size_t compared = 0;               ///< queries compared
    size_t distance_queries = 0;       ///< queries with any distance different
    size_t label_queries = 0;          ///< queries with any label different
    std::vector<std::string> examples; ///< first few, readable
};

Mismatch compare_answers(
        const Answers& reference,
        const Answers& answers,
        size_t nq,
        int k);

} // namespace ivf
} // namespace bench
