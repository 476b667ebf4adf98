#include "ccd_glue.h"

#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/PoolStats.h>
#include <faiss/ccd_scheduler/StealPolicy.h>

#include <cmath>
#include <exception>
#include <sstream>
#include <utility>

namespace faiss {
namespace ccd {
namespace python {

namespace {

/// JsonList: "[a, b, c]" from any range of numbers.
template <class Range>
std::string json_list(const Range& values) {
    std::ostringstream out;
    out << '[';
    bool first = true;
    for (const auto& v : values) {
        out << (first ? "" : ", ") << v;
        first = false;
    }
    out << ']';
    return out.str();
}

/// json_number: JSON has no NaN or infinity.
std::string json_number(double v) {
    if (!std::isfinite(v)) {
        return "null";
    }
    std::ostringstream out;
    out.precision(17);
    out << v;
    return out.str();
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

std::shared_ptr<Runtime> make_runtime(
        const std::string& topology,
        const std::string& policy,
        bool monitor,
        double monitor_period_s,
        bool fifo_callers) {
    PoolOptions pool;
    pool.fifo_callers = fifo_callers;
    return Runtime::create(RuntimeOptions()
                                   .set_topology(topology)
                                   .set_policy(policy_from_name(policy))
                                   .set_pool(pool)
                                   .set_monitor(monitor, monitor_period_s));
}

std::string stats_json(const Runtime& runtime) {
    const PoolStats s = runtime.pool().stats();
    std::ostringstream out;
    out << "{\"policy\": \"" << policy_name(runtime.pool().policy()) << "\"";
    out << ", \"num_workers\": " << runtime.pool().num_workers();
    out << ", \"num_ccds\": " << runtime.pool().topology().num_ccds();
    out << ", \"epoch\": " << s.mapping_epoch;
    out << ", \"tasks_run\": " << s.tasks_run();
    out << ", \"callers\": " << s.callers;
    out << ", \"local_pops\": " << s.local_pops();
    out << ", \"intra_ccd_steals\": " << s.intra_ccd_steals();
    out << ", \"cross_ccd_steals\": " << s.cross_ccd_steals();
    out << ", \"parks\": " << s.parks();
    const uint64_t steals = s.intra_ccd_steals() + s.cross_ccd_steals();
    const uint64_t run = s.tasks_run();
    out << ", \"steal_ratio\": "
        << json_number(run ? double(steals) / double(run) : 0.0);
    out << ", \"cross_ccd_steal_ratio\": "
        << json_number(s.cross_ccd_steal_ratio());
    out << ", \"tasks_run_per_ccd\": " << json_list(s.tasks_run_per_ccd());
    out << ", \"workers\": [";
    for (size_t i = 0; i < s.workers.size(); i++) {
        const WorkerStats& w = s.workers[i];
        out << (i ? ", " : "") << "{\"worker\": " << w.worker
            << ", \"ccd\": " << w.ccd << ", \"cpu\": " << w.cpu
            << ", \"tasks_run\": " << w.tasks_run
            << ", \"local_pops\": " << w.local_pops
            << ", \"intra_ccd_steals\": " << w.intra_ccd_steals
            << ", \"cross_ccd_steals\": " << w.cross_ccd_steals
            << ", \"parks\": " << w.parks
            << ", \"uncaught_exceptions\": " << w.uncaught_exceptions
            << ", \"queued\": " << w.queued << '}';
    }
    out << ']';
    if (const Monitor* monitor = runtime.monitor()) {
        const MonitorStats m = monitor->stats();
        out << ", \"monitor\": {\"ccd_traffic\": " << json_list(m.ccd_traffic)
            << ", \"imbalance\": " << json_number(m.imbalance)
            << ", \"fast_bytes\": " << m.fast_bytes
            << ", \"slow_bytes\": " << m.slow_bytes
            << ", \"records\": " << m.records << ", \"remaps\": " << m.remaps
            << ", \"last_remap_time\": " << json_number(m.last_remap_time)
            << '}';
    } else {
        out << ", \"monitor\": null";
    }
    out << '}';
    return out.str();
}

void submit_batch(
        const HNSWTables& tables,
        uint32_t table_id,
        Index::idx_t n,
        const float* x,
        int d,
        Index::idx_t k,
        float* distances,
        Index::idx_t* labels,
        const SearchParametersHNSW* params,
        int64_t ticket,
        Completions& completions) {
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
        tables.search_batch_async(
                table_id,
                n,
                x,
                d,
                k,
                distances,
                labels,
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
