/**
 * Mapping: which CCD each MappingId lives on, computed from traffic.
 *
 * Pure functions and an immutable value; no threads, no atomics. The
 * monitor (Monitor.h) feeds them measured traffic and publishes the result
 * to the pool; a unit test or a simulator can call them directly.
 *
 * place_hot_cold is the paper's Algorithm 1 ("balancing CCD-item mapping
 * with hot-cold co-location"): target per-CCD load mu = total / nCCD; items
 * sorted by traffic; repeatedly take the least-loaded CCD, give it the
 * hottest remaining item, and if the coldest remaining item fits in what is
 * left of mu there, put it beside (hot-cold pairing), else the hot item
 * stays alone. Departure: ties between equally loaded CCDs go to the lowest
 * index, so the result is deterministic.
 *
 * place_migration_aware (beyond the paper): the same sweep, but among CCDs
 * whose load is within `slack * mu` of the least loaded, an item goes back
 * to the CCD it is on now. A moved hot list arrives at a cold L3, so among
 * near-equal placements the one that moves the least traffic wins.
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>
#include <faiss/ccd_scheduler/Placement.h>

#include <cstdint>
#include <string>
#include <vector>

namespace faiss {
namespace ccd {

/// place_hot_cold: CCD of each item, from its traffic. Every item is placed
/// exactly once; with fewer items than CCDs each item is alone.
std::vector<int> place_hot_cold(
        const std::vector<uint64_t>& traffic,
        int num_ccds);

/// place_migration_aware: like place_hot_cold, keeping items on
/// `current[i]` (-1: nowhere yet) when that costs at most slack * mu.
std::vector<int> place_migration_aware(
        const std::vector<uint64_t>& traffic,
        const std::vector<int>& current,
        int num_ccds,
        double slack = 0.05);

/// ccd_loads: total traffic per CCD under a placement.
std::vector<uint64_t> ccd_loads(
        const std::vector<uint64_t>& traffic,
        const std::vector<int>& ccd_of_item,
        int num_ccds);

/// imbalance: max over mean of per-CCD loads (1.0 = perfect; 1.0 for no
/// traffic at all).
double imbalance(const std::vector<uint64_t>& loads);

/// MappingSnapshot: an immutable id -> CCD table with an epoch, used as the
/// pool's Placement. Ids it does not hold fall back to HashPlacement, the
/// stable default for ids never seen.
class MappingSnapshot final : public Placement {
   public:
    /// ids and ccds: parallel arrays, ids distinct. Throws
    /// std::invalid_argument on a size mismatch, a duplicate id or a CCD
    /// outside [0, num_ccds).
    MappingSnapshot(
            std::vector<MappingId> ids,
            std::vector<int> ccds,
            int num_ccds,
            uint64_t epoch);

    int pick_ccd(MappingId id, int num_ccds) const override;
    std::string name() const override {
        return "mapping";
    }

    uint64_t epoch() const {
        return epoch_;
    }
    size_t size() const {
        return ids_.size();
    }
    /// ids: every id the snapshot holds, in construction order.
    const std::vector<MappingId>& ids() const {
        return ids_;
    }
    /// find: the CCD this snapshot holds for `id`, or -1.
    int find(MappingId id) const;

   private:
    // Open addressing, power-of-two capacity, load <= 1/2: lookups touch
    // one or two cache lines and never allocate.
    std::vector<MappingId> slots_;
    std::vector<int16_t> slot_ccd_; ///< -1 = empty slot
    std::vector<MappingId> ids_;
    int num_ccds_;
    uint64_t epoch_;
    uint64_t mask_;
};

} // namespace ccd
} // namespace faiss
