/**
 * PoolHandle: what Python's faiss_ccd.Pool holds: a Runtime (a Pool plus, by
 * default, the Monitor that re-maps its keys as traffic drifts); every index
 * and table searched through this handle reports its traffic to that
 * monitor.
 *
 * Lifetime. The runtime is shared by the PoolHandle and every
 * IndexIVFCCDHandle and HNSWTablesHandle made from it, so a search in
 * progress keeps it alive whatever Python drops meanwhile (a default pool
 * replaced while another thread searches through it, say). The last
 * owner's ~Runtime waits until the pool is idle, then stops the monitor,
 * then the pool.
 *
 * Thread contract: every method from any thread; the SWIG module calls
 * them without the GIL.
 */

#pragma once

#include <faiss/ccd_scheduler/Runtime.h>

#include <memory>
#include <string>

namespace faiss {
namespace ccd {
namespace python {

class PoolHandle {
   public:
    /// PoolHandle: `topology` "auto" (FAISS_CCD_TOPOLOGY, else hwloc) or a
    /// spec ("4x2", "0-3;4-7"); `policy` "ccd", "flat" or "rr". With
    /// `monitor`, a Monitor ticks every `monitor_period_s` seconds.
    /// Throws std::invalid_argument on a bad spec, policy or period.
    PoolHandle(
            const std::string& topology,
            const std::string& policy,
            bool monitor,
            double monitor_period_s);
    PoolHandle(const PoolHandle&) = delete;
    PoolHandle& operator=(const PoolHandle&) = delete;

    std::string describe_topology() const;
    std::string policy_name() const;
    int num_workers() const;
    int num_ccds() const;

    /// stats_json: a JSON object with the pool's counters (per worker and
    /// totals), steal ratios, tasks per CCD, the placement epoch and, with a
    /// monitor, its per-CCD traffic, imbalance and re-maps.
    std::string stats_json() const;

    /// wait_idle: block until every task submitted so far has run.
    void wait_idle() const;

    // ---- C++ side only (not wrapped)

    const std::shared_ptr<Runtime>& runtime() const {
        return runtime_;
    }

   private:
    std::shared_ptr<Runtime> runtime_;
};

} // namespace python
} // namespace ccd
} // namespace faiss
