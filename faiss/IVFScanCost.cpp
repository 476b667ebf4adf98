#include <faiss/IVFScanCost.h>

#include <faiss/ccd_scheduler/Mapping.h>

#include <algorithm>
#include <atomic>
#include <cmath>
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
/// cost. slots: alone and other shapes; split_slots: ScanShape::split.
std::atomic<uint64_t> slots[kSlots];
std::atomic<uint64_t> split_slots[kSlots];

// Each alone call moves the split estimate this far back toward the alone
// one (see split_scan_ns_per_code).
constexpr double kSplitRetry = 1.0 / 32;

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

size_t slot_index(uint32_t table_id) {
    return hash_mapping_id(table_id) % kSlots;
}

/// known: the slot's cost if it holds `table_id`'s, else 0.
double known(const std::atomic<uint64_t>& slot, uint32_t table_id) {
    const uint64_t word = slot.load(std::memory_order_relaxed);
    const float ns = cost_of(word);
    return uint32_t(word >> 32) == table_id && ns > 0 ? ns : 0;
}

/// move: the slot's cost a `weight` of the way toward `sample` (to the
/// sample itself when the slot holds another table's or nothing).
void move(
        std::atomic<uint64_t>& slot,
        uint32_t table_id,
        double sample,
        double weight) {
    const double old = known(slot, table_id);
    const double next = old > 0 ? old + weight * (sample - old) : sample;
    slot.store(pack(table_id, float(next)), std::memory_order_relaxed);
}

/// Term slots, per table slot: set_query, set_list, merge (BatchShape.h's
/// ScanTerms), list-major's whole cost per code, and the quantizer's cost
/// per query.
enum Term {
    kSetQuery,
    kSetList,
    kMerge,
    kCodeListMajor,
    kCoarse,
    kPricedCalls, ///< a count, not a cost
    kTerms
};
std::atomic<uint64_t> term_slots[kSlots][kTerms];

void note_term(
        size_t i,
        Term t,
        uint32_t table_id,
        double ns,
        double count,
        double weight = kWeight) {
    // At least 0.01 ns: a measured term is never read back as "never
    // measured" (known() takes 0 for that), however cheap.
    if (count > 0 && ns >= 0) {
        move(term_slots[i][t], table_id, std::max(0.01, ns / count), weight);
    }
}

} // namespace

ScanTerms scan_terms(uint32_t table_id, size_t code_size) {
    const size_t i = slot_index(table_id);
    ScanTerms t;
    t.set_query_ns = known(term_slots[i][kSetQuery], table_id);
    t.set_list_ns = known(term_slots[i][kSetList], table_id);
    t.merge_ns = known(term_slots[i][kMerge], table_id);
    t.code_ns = scan_ns_per_code(table_id, code_size);
    // List-major's measure is compared with query-major's measure only,
    // never with the first guess: before query-major ran, the prior
    // prices list-major (BatchShape.h).
    t.code_list_major_ns = known(slots[i], table_id) > 0
            ? known(term_slots[i][kCodeListMajor], table_id)
            : 0;
    return t;
}

ShapeHistory priced_call(uint32_t table_id) {
    const size_t i = slot_index(table_id);
    ShapeHistory h;
    h.query_major_measured = known(slots[i], table_id) > 0;
    // Stored one more than the count (known() reads 0 as "nothing"),
    // wrapped well inside a float's exact integers.
    const double stored = known(term_slots[i][kPricedCalls], table_id);
    h.calls = stored > 0 ? stored - 1 : 0;
    term_slots[i][kPricedCalls].store(
            pack(table_id, float(std::fmod(h.calls + 1, 1 << 20) + 1)),
            std::memory_order_relaxed);
    return h;
}

bool has_setup_terms(uint32_t table_id) {
    return known(term_slots[slot_index(table_id)][kSetQuery], table_id) > 0;
}

void note_scan_terms(uint32_t table_id, const TermSample& s) {
    const size_t i = slot_index(table_id);
    note_term(i, kSetQuery, table_id, s.set_query_ns, s.set_queries);
    note_term(i, kSetList, table_id, s.set_list_ns, s.set_lists);
    note_term(i, kMerge, table_id, s.merge_ns, s.merges);
}

double coarse_ns_per_query(uint32_t table_id) {
    return known(term_slots[slot_index(table_id)][kCoarse], table_id);
}

void note_coarse_cost(uint32_t table_id, double ns, double queries) {
    note_term(slot_index(table_id), kCoarse, table_id, ns, queries);
}

double list_major_scan_ns_per_code(uint32_t table_id) {
    return known(term_slots[slot_index(table_id)][kCodeListMajor], table_id);
}

double scan_ns_per_code(uint32_t table_id, size_t code_size) {
    const double ns = known(slots[slot_index(table_id)], table_id);
    return ns > 0 ? ns : kInitialNsPerCodeByte * double(code_size);
}

double split_scan_ns_per_code(uint32_t table_id, size_t code_size) {
    const double ns = known(split_slots[slot_index(table_id)], table_id);
    return ns > 0 ? ns : scan_ns_per_code(table_id, code_size);
}

void note_scan_cost(
        uint32_t table_id,
        double ns,
        double codes,
        ScanShape shape,
        bool fresh) {
    if (!(codes > 0) || !(ns >= 0)) {
        return;
    }
    const size_t i = slot_index(table_id);
    const double sample = ns / codes;
    const double weight = fresh ? 1.0 : kWeight;
    if (shape == ScanShape::list_major) {
        note_term(i, kCodeListMajor, table_id, ns, codes, weight);
        return;
    }
    if (shape == ScanShape::split) {
        move(split_slots[i], table_id, sample, kWeight);
        return;
    }
    move(slots[i], table_id, sample, weight);
    if (shape == ScanShape::alone && known(split_slots[i], table_id) > 0) {
        move(split_slots[i], table_id, known(slots[i], table_id), kSplitRetry);
    }
}

} // namespace ccd
} // namespace faiss
