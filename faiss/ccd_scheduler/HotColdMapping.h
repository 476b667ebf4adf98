/**
 * HotColdMapping: which CCD each MappingId should live on, computed from
 * traffic (the mapping policy).
 *
 * Pure functions; no threads, no atomics. The
 * monitor (Monitor.h) feeds them measured traffic and publishes the result
 * to the pool; a unit test or a simulator can call them directly.
 *
 * map_hot_cold is the paper's Algorithm 1 ("balancing CCD-item mapping
 * with hot-cold co-location"): target per-CCD load mu = total / nCCD; items
 * sorted by traffic; repeatedly take the least-loaded CCD, give it the
 * hottest remaining item, and if the coldest remaining item fits in what is
 * left of mu there, put it beside (hot-cold pairing), else the hot item
 * stays alone. Departure: ties between equally loaded CCDs go to the lowest
 * index, so the result is deterministic.
 *
 * map_migration_aware (beyond the paper): the same sweep, but among CCDs
 * whose load is within `slack * mu` of the least loaded, an item goes back
 * to the CCD it is on now. A moved hot list arrives at a cold L3, so among
 * near-equal mappings the one that moves the least traffic wins.
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <cstdint>
#include <vector>

namespace faiss {
namespace ccd {

/// map_hot_cold: CCD of each item, from its traffic. Every item is placed
/// exactly once; with fewer items than CCDs each item is alone.
std::vector<int> map_hot_cold(
        const std::vector<uint64_t>& traffic,
        int num_ccds);

/// map_migration_aware: like map_hot_cold, keeping items on
/// `current[i]` (-1: nowhere yet) when that costs at most slack * mu.
std::vector<int> map_migration_aware(
        const std::vector<uint64_t>& traffic,
        const std::vector<int>& current,
        int num_ccds,
        double slack = 0.05);

/// ccd_loads: total traffic per CCD under a mapping.
std::vector<uint64_t> ccd_loads(
        const std::vector<uint64_t>& traffic,
        const std::vector<int>& ccd_of_item,
        int num_ccds);

/// imbalance: max over mean of per-CCD loads (1.0 = perfect; 1.0 for no
/// traffic at all).
double imbalance(const std::vector<uint64_t>& loads);

} // namespace ccd
} // namespace faiss
