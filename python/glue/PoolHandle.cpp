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

Topology topology_from(const std::string& spec) {
    if (spec.empty() || spec == "auto") {
        return Topology::from_env_or_detect();
    }
    return Topology::from_spec(spec);
}

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
        : core_(std::make_shared<PoolCore>()) {
    if (monitor && !(monitor_period_s > 0 && monitor_period_s < 3600)) {
        throw std::invalid_argument(
                "Pool: monitor_period must be in (0, 3600) seconds");
    }
    PolicyKind kind = policy_from_name(policy);
    core_->pool = std::make_shared<Pool>(topology_from(topology), kind);
    if (monitor) {
        core_->monitor = std::make_unique<Monitor>(*core_->pool);
        core_->monitor->start(monitor_period_s);
    }
}

PoolCore::~PoolCore() {
    if (!pool) {
        return; // the constructor failed before making it
    }
    // Queries in flight may still record into the monitor: let them finish
    // before it goes, then stop it before the pool it watches goes.
    pool->wait_idle();
    monitor.reset();
    pool.reset();
}

std::string PoolHandle::describe_topology() const {
    return core_->pool->topology().describe();
}

std::string PoolHandle::policy_name() const {
    return ::faiss::ccd::policy_name(core_->pool->policy());
}

int PoolHandle::num_workers() const {
    return core_->pool->num_workers();
}

int PoolHandle::num_ccds() const {
    return core_->pool->topology().num_ccds();
}

void PoolHandle::wait_idle() const {
    core_->pool->wait_idle();
}

std::string PoolHandle::stats_json() const {
    const PoolStats s = core_->pool->stats();
    std::ostringstream out;
    out << "{\"policy\": \"" << policy_name() << "\"";
    out << ", \"num_workers\": " << num_workers();
    out << ", \"num_ccds\": " << num_ccds();
    out << ", \"epoch\": " << s.placement_epoch;
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
    if (core_->monitor) {
        const MonitorStats m = core_->monitor->stats();
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
