/**
 * L3Cache: one CCD's last-level cache as an LRU over fixed-size blocks.
 *
 * A block is `block_bytes` of one object (an IVF list, an HNSW table's
 * region): key = (object, block index). Capacity is in bytes; the last
 * block of an object may be partial and occupies only its bytes. Reads are
 * whole blocks: a hit serves the block's bytes from L3, a miss from DRAM
 * and inserts it, evicting least-recently-used blocks until it fits.
 *
 * Departures from the real part, on purpose (docs/SIMULATION.md): Zen's L3
 * is a victim cache of the L2s, mostly exclusive, with 16-way sets and a
 * replacement policy AMD does not document; here it is fully associative
 * LRU, and the L2 is not modelled (a scan streams far more than an L2).
 */

#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>

namespace sim {

class L3Cache {
   public:
    explicit L3Cache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

    /// read: touch one block of `bytes` (<= the block size); true on a hit.
    bool read(uint64_t object, uint32_t block, uint32_t bytes) {
        const uint64_t key = (object << 24) ^ block;
        auto it = index_.find(key);
        if (it != index_.end()) {
            lru_.splice(lru_.begin(), lru_, it->second);
            return true;
        }
        if (bytes > capacity_) {
            return false; // never fits: streamed past the cache
        }
        while (used_ + bytes > capacity_) {
            const Line& victim = lru_.back();
            used_ -= victim.bytes;
            index_.erase(victim.key);
            lru_.pop_back();
        }
        lru_.push_front(Line{key, bytes});
        index_[key] = lru_.begin();
        used_ += bytes;
        return false;
    }

    uint64_t used_bytes() const {
        return used_;
    }
    uint64_t capacity_bytes() const {
        return capacity_;
    }

   private:
    struct Line {
        uint64_t key;
        uint32_t bytes;
    };
    uint64_t capacity_;
    uint64_t used_ = 0;
    std::list<Line> lru_; ///< most recent first
    std::unordered_map<uint64_t, std::list<Line>::iterator> index_;
};

} // namespace sim
