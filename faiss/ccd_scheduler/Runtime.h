/**
 * Runtime: a Pool, the Monitor that re-maps its keys as traffic drifts, and
 * the wiring between them, assembled in one place. Everything that searches
 * through the pool takes a Runtime: the FAISS glue (IndexIVFCCD,
 * HNSWTables, IndexIVF's PARALLEL_MODE_CCD), the Python module, the C API
 * and the benchmarks.
 *
 *   auto runtime = Runtime::create();  // FAISS_CCD_TOPOLOGY, else hwloc
 *   auto small = Runtime::create(
 *           RuntimeOptions().set_topology("4x2").set_monitor(false));
 *
 * The process-wide default runtime (Runtime::get_default) is made on first
 * use from RuntimeOptions(), so the topology comes from FAISS_CCD_TOPOLOGY
 * or hwloc; Runtime::set_default replaces it. Holders of the previous one
 * keep it alive until they let go.
 *
 * Lifetime: the destructor waits until the pool is idle (tasks in flight
 * may still report traffic to the monitor), then stops the monitor, then
 * the pool. A pool cannot be stopped from one of its own workers, so when
 * the last reference to a runtime that create() made goes on one of them
 * (a search running in a task held the default runtime, which
 * set_default replaced meanwhile), a thread of its own destroys it.
 * Deleting a Runtime directly on one of its workers aborts with a message.
 *
 * Thread contract: every method from any thread; the static ones too.
 */

#pragma once

#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/TrafficSink.h>

#include <memory>
#include <string>

namespace faiss {
namespace ccd {

/// RuntimeOptions: what to build. A value type with chainable setters.
struct RuntimeOptions {
    /// "auto" (FAISS_CCD_TOPOLOGY, else hwloc), "NxM" or CPU lists
    /// ("0-3;4-7"); see Topology::from_string.
    std::string topology = "auto";
    PolicyKind policy = PolicyKind::ccd;
    PoolOptions pool;
    /// monitor: re-map keys as traffic drifts (ccd policy only does
    /// anything with it), ticking every monitor_period_s seconds.
    bool monitor = true;
    double monitor_period_s = 0.5;
    MonitorConfig monitor_config;

    RuntimeOptions& set_topology(std::string spec) {
        topology = std::move(spec);
        return *this;
    }
    RuntimeOptions& set_policy(PolicyKind kind) {
        policy = kind;
        return *this;
    }
    RuntimeOptions& set_pool(const PoolOptions& options) {
        pool = options;
        return *this;
    }
    RuntimeOptions& set_monitor(bool on, double period_s = 0.5) {
        monitor = on;
        monitor_period_s = period_s;
        return *this;
    }
    RuntimeOptions& set_monitor_config(const MonitorConfig& config) {
        monitor_config = config;
        return *this;
    }
};

class Runtime {
   public:
    /// Runtime: throws std::invalid_argument on a bad topology spec or
    /// monitor period (which must be in (0, 3600) seconds).
    explicit Runtime(const RuntimeOptions& options = RuntimeOptions());
    ~Runtime();

    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    /// create: a shared runtime (see "Lifetime" for its deleter).
    static std::shared_ptr<Runtime> create(
            const RuntimeOptions& options = RuntimeOptions());

    Pool& pool() const {
        return *pool_;
    }
    /// monitor: nullptr when the options turned it off.
    Monitor* monitor() const {
        return monitor_.get();
    }
    /// traffic_sink: where searches report the memory they touched (the
    /// monitor), or nullptr.
    TrafficSink* traffic_sink() const {
        return monitor_.get();
    }

    /// get_default: the process-wide runtime, made on first use.
    static std::shared_ptr<Runtime> get_default();
    /// set_default: replace it (nullptr: make a fresh one on next use).
    static void set_default(std::shared_ptr<Runtime> runtime);

   private:
    std::unique_ptr<Pool> pool_;
    std::unique_ptr<Monitor> monitor_;
};

} // namespace ccd
} // namespace faiss
