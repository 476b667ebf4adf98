#include "PoolHandle.h"

#include <faiss/ccd_scheduler/PoolStats.h>
#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

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

} // namespace

PoolHandle::PoolHandle(
        const std::string& topology,
        const std::string& policy,
        bool monitor,
        double monitor_period_s)
        : runtime_(Runtime::create(
                  RuntimeOptions()
                          .set_topology(topology)
                          .set_policy(policy_from_name(policy))
                          .set_monitor(monitor, monitor_period_s))) {}

std::string PoolHandle::describe_topology() const {
    return runtime_->pool().topology().describe();
}

std::string PoolHandle::policy_name() const {
    return ::faiss::ccd::policy_name(runtime_->pool().policy());
}

int PoolHandle::num_workers() const {
    return runtime_->pool().num_workers();
}

int PoolHandle::num_ccds() const {
    return runtime_->pool().topology().num_ccds();
}

void PoolHandle::wait_idle() const {
    runtime_->pool().wait_idle();
}

std::string PoolHandle::stats_json() const {
    const PoolStats s = runtime_->pool().stats();
    std::ostringstream out;
    out << "{\"policy\": \"" << policy_name() << "\"";
    out << ", \"num_workers\": " << num_workers();
    out << ", \"num_ccds\": " << num_ccds();
    out << ", \"epoch\": " << s.mapping_epoch;
    out << ", \"tasks_run\": " << s.tasks_run();
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
    if (const Monitor* monitor = runtime_->monitor()) {
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

} // namespace python
} // namespace ccd
} // namespace faiss
