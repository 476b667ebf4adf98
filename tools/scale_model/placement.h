/**
 * Placement: the variants' dispatch-side state, built on the project's
 * own placement and monitor code (linked from faiss_ccd_scheduler, never
 * copied): MappingSnapshot / HashMapping answer pick_ccd, TrafficWindow
 * keeps the fast and slow windows, plan_remap (Monitor.h) decides and
 * builds each re-map, map_hot_cold / ccd_loads / imbalance
 * (HotColdMapping.h) place replicas.
 *
 * Variants:
 *  - V0: one shared dynamic queue (OpenMP's schedule(dynamic)) for IVF;
 *        PolicyKind::round_robin for HNSW (the production baseline).
 *  - V1: PolicyKind::flat_steal (bthread-style stealing, round-robin
 *        placement).
 *  - V2: PolicyKind::ccd: placement by MappingId through the mapping the
 *        monitor rules publish (plan_remap every tick), hierarchical
 *        stealing with the pool's default StealConfig.
 *  - V3: V2 plus (a) replication: an id whose fast-window traffic exceeds
 *        a CCD's share is given k = ceil(traffic / share) CCDs (at most
 *        every CCD, and only while one copy takes at most half an L3);
 *        the placement is map_hot_cold over the ids with each hot id
 *        split into k equal parts; its tasks go round-robin over the
 *        replicas; (b) the model-chosen defaults of SimConfig::v3_*.
 */

#pragma once

#include "memory.h"
#include "workload.h"

#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/TrafficWindow.h>

#include <memory>
#include <unordered_map>
#include <vector>

namespace sim {

enum class Variant { V0, V1, V2, V3 };
const char* variant_name(Variant v);

class Placement {
   public:
    Placement(
            Variant variant,
            const faiss::ccd::MonitorConfig& monitor,
            int num_ccds,
            uint64_t l3_bytes,
            const Workload& workload);

    /// ccd_of: the CCD a task on `item` goes to (-1: the variant does not
    /// place by id); `turn` picks among replicas.
    int ccd_of(uint32_t item, uint64_t turn) const;

    /// record: a finished task's traffic (buffered until the next tick,
    /// as the Monitor buffers per worker).
    void record(uint32_t item, uint64_t bytes);

    /// tick: the monitor's tick at simulated time now_s; true on a re-map.
    bool tick(double now_s);

    size_t remaps() const {
        return remaps_;
    }
    uint64_t traffic_moved() const {
        return traffic_moved_;
    }
    size_t replicated_ids() const {
        return replicas_.size();
    }
    /// mapping: the mapping in force (what the pool would hold).
    const faiss::ccd::Mapping& mapping() const {
        return *mapping_;
    }

   private:
    bool tick_replicated(double now_s);

    Variant variant_;
    faiss::ccd::MonitorConfig config_;
    int num_ccds_;
    uint64_t l3_bytes_;
    const Workload& workload_;
    std::shared_ptr<const faiss::ccd::Mapping> mapping_;
    std::shared_ptr<const faiss::ccd::MappingSnapshot> snapshot_;
    faiss::ccd::TrafficWindow fast_;
    faiss::ccd::TrafficWindow slow_;
    std::vector<uint64_t> batch_; ///< per item, since the last tick
    double last_remap_s_;
    size_t remaps_ = 0;
    uint64_t traffic_moved_ = 0;
    std::unordered_map<uint32_t, std::vector<int>> replicas_; ///< V3
};

} // namespace sim
