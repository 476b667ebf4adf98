#include <faiss/IVFScanCost.h>

#include <faiss/ccd_scheduler/Mapping.h>

#include <atomic>
#include <cstring>

namespace faiss {
namespace ccd {

IVFSearchCCDStats ivf_ccd_stats;

void IVFSearchCCDStats::reset() {
    *this = IVFSearchCCDStats();
}

namespace {

constexpr int kSlots = 256;
// Exponential moving average weight of a new call's measurement.
constexpr double kWeight = 0.25;

/// Slot: table id (high 32 bits) and ns per code (a float, low 32 bits),
/// one word, so that a reader never pairs one table's id with another's
/// cost.
std::atomic<uint64_t> slots[kSlots];

uint64_t pack(uint32_t table_id, float ns) {
    uint32_t bits;
    std::memcpy(&bits, &ns, sizeof(bits));
    return uint64_t(table_id) << 32 | bits;
}

float cost_of(uint64_t word) {
    const uint32_t bits = uint32_t(word);
    float ns;
    std::memcpy(&ns, &bits, sizeof(ns));
    return ns;
}

std::atomic<uint64_t>& slot_of(uint32_t table_id) {
    return slots[hash_mapping_id(table_id) % kSlots];
}

} // namespace

double scan_ns_per_code(uint32_t table_id, size_t code_size) {
    const uint64_t word = slot_of(table_id).load(std::memory_order_relaxed);
    const float ns = cost_of(word);
    if (uint32_t(word >> 32) == table_id && ns > 0) {
        return ns;
    }
    return kInitialNsPerCodeByte * double(code_size);
}

void note_scan_cost(uint32_t table_id, double ns, double codes) {
    if (!(codes > 0) || !(ns >= 0)) {
        return;
    }
    std::atomic<uint64_t>& slot = slot_of(table_id);
    const uint64_t word = slot.load(std::memory_order_relaxed);
    const double sample = ns / codes;
    double next = sample;
    if (uint32_t(word >> 32) == table_id && cost_of(word) > 0) {
        next = cost_of(word) + kWeight * (sample - cost_of(word));
    }
    slot.store(pack(table_id, float(next)), std::memory_order_relaxed);
}

} // namespace ccd
} // namespace faiss
