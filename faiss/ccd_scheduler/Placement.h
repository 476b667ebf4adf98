/**
 * Placement: which CCD a MappingId belongs to (the dispatcher's pickCcd).
 *
 * An immutable object consulted on every submit, so pick_ccd() must be
 * cheap, thread-safe and allocation-free. The pool holds one placement at a
 * time; HashPlacement is the default and the answer for ids a traffic-aware
 * placement has never seen.
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <cstdint>
#include <string>

namespace faiss {
namespace ccd {

class Placement {
   public:
    virtual ~Placement() = default;
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

/// HashPlacement: a stable hash of the id, modulo the number of CCDs.
class HashPlacement final : public Placement {
   public:
    int pick_ccd(MappingId id, int num_ccds) const override {
        // Multiply-shift instead of modulo: uniform and division-free.
        return int((unsigned __int128)(hash_mapping_id(id)) *
                           uint64_t(num_ccds) >>
                   64);
    }
    std::string name() const override {
        return "hash";
    }
};

} // namespace ccd
} // namespace faiss
