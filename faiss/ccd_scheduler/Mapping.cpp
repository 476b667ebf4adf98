#include <faiss/ccd_scheduler/Mapping.h>

#include <stdexcept>
#include <utility>

namespace faiss {
namespace ccd {

MappingSnapshot::MappingSnapshot(
        std::vector<MappingId> ids,
        std::vector<int> ccds,
        int num_ccds)
        : ids_(std::move(ids)), num_ccds_(num_ccds) {
    if (ids_.size() != ccds.size()) {
        throw std::invalid_argument(
                "MappingSnapshot: ids and ccds differ in size");
    }
    if (num_ccds <= 0 || num_ccds > 32767) {
        throw std::invalid_argument("MappingSnapshot: num_ccds out of range");
    }
    uint64_t capacity = 16;
    while (capacity < 2 * ids_.size()) {
        capacity *= 2;
    }
    mask_ = capacity - 1;
    slots_.assign(capacity, 0);
    slot_ccd_.assign(capacity, -1);
    for (size_t i = 0; i < ids_.size(); i++) {
        if (ccds[i] < 0 || ccds[i] >= num_ccds) {
            throw std::invalid_argument("MappingSnapshot: CCD out of range");
        }
        uint64_t s = hash_mapping_id(ids_[i]) & mask_;
        while (slot_ccd_[s] >= 0) {
            if (slots_[s] == ids_[i]) {
                throw std::invalid_argument("MappingSnapshot: duplicate id");
            }
            s = (s + 1) & mask_;
        }
        slots_[s] = ids_[i];
        slot_ccd_[s] = int16_t(ccds[i]);
    }
}

int MappingSnapshot::find(MappingId id) const {
    uint64_t s = hash_mapping_id(id) & mask_;
    while (slot_ccd_[s] >= 0) {
        if (slots_[s] == id) {
            return slot_ccd_[s];
        }
        s = (s + 1) & mask_;
    }
    return -1;
}

int MappingSnapshot::pick_ccd(MappingId id, int num_ccds) const {
    const int c = find(id);
    if (c >= 0 && c < num_ccds) {
        return c;
    }
    return HashMapping().pick_ccd(id, num_ccds);
}

} // namespace ccd
} // namespace faiss
