/**
 * Mapping: which CCD a MappingId belongs to (the dispatcher's pickCcd).
 *
 * An immutable object consulted on every submit, so pick_ccd() must be
 * cheap, thread-safe and allocation-free. The pool holds one mapping at a
 * time and numbers them (Pool::mapping_epoch); HashMapping is the default
 * and the answer for ids a traffic-aware mapping has never seen.
 * MappingSnapshot is the table the Monitor builds from traffic
 * (HotColdMapping.h) and publishes with Pool::set_mapping.
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <cstdint>
#include <string>
#include <vector>

namespace faiss {
namespace ccd {

class Mapping {
   public:
    virtual ~Mapping() = default;
    /// pick_ccd: a CCD in [0, num_ccds). Same id, same answer, for the
    /// lifetime of the object. Any thread.
    virtual int pick_ccd(MappingId id, int num_ccds) const = 0;
    virtual std::string name() const = 0;
};

/// hash_mapping_id: a well-mixed 64-bit hash of an id (splitmix64's
/// finaliser), so that consecutive list numbers spread over CCDs.
inline uint64_t hash_mapping_id(MappingId id) {
    uint64_t z = id + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// HashMapping: a stable hash of the id, modulo the number of CCDs.
class HashMapping final : public Mapping {
   public:
    int pick_ccd(MappingId id, int num_ccds) const override {
        // Multiply-shift instead of modulo: uniform and division-free.
        return int(
                (unsigned __int128)(hash_mapping_id(id)) * uint64_t(num_ccds) >>
                64);
    }
    std::string name() const override {
        return "hash";
    }
};

/// MappingSnapshot: an immutable id -> CCD table, used as the pool's
/// Mapping. Ids it does not hold fall back to HashMapping, the
/// stable default for ids never seen.
class MappingSnapshot final : public Mapping {
   public:
    /// ids and ccds: parallel arrays, ids distinct. Throws
    /// std::invalid_argument on a size mismatch, a duplicate id or a CCD
    /// outside [0, num_ccds).
    MappingSnapshot(
            std::vector<MappingId> ids,
            std::vector<int> ccds,
            int num_ccds);

    int pick_ccd(MappingId id, int num_ccds) const override;
    std::string name() const override {
        return "mapping";
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
    uint64_t mask_;
};

} // namespace ccd
} // namespace faiss
