#include "IndexIVFCCDHandle.h"

#include <faiss/impl/FaissAssert.h>

#include <cstring>

namespace faiss {
namespace ccd {
namespace python {

namespace {

const SearchParameters* params_at(uintptr_t address) {
    return reinterpret_cast<const SearchParameters*>(address);
}

} // namespace

RangeResult::RangeResult(int64_t nq) : result_(size_t(nq)) {}

int64_t RangeResult::total() const {
    return int64_t(result_.lims[result_.nq]);
}

void RangeResult::copy_to(uintptr_t lims, uintptr_t distances, uintptr_t labels)
        const {
    const size_t total = result_.lims[result_.nq];
    std::memcpy(
            reinterpret_cast<void*>(lims),
            result_.lims,
            (result_.nq + 1) * sizeof(size_t));
    if (total > 0) {
        std::memcpy(
                reinterpret_cast<void*>(distances),
                result_.distances,
                total * sizeof(float));
        std::memcpy(
                reinterpret_cast<void*>(labels),
                result_.labels,
                total * sizeof(Index::idx_t));
    }
}

IndexIVFCCDHandle::IndexIVFCCDHandle(
        PoolHandle& pool,
        uintptr_t index_address,
        uint32_t table_id) {
    auto* ivf =
            dynamic_cast<IndexIVF*>(reinterpret_cast<Index*>(index_address));
    FAISS_THROW_IF_NOT_MSG(ivf, "IndexIVFCCD: index is not a faiss.IndexIVF");
    index_ = std::make_unique<IndexIVFCCD>(ivf, pool.runtime(), table_id);
}

void IndexIVFCCDHandle::search(
        int64_t n,
        uintptr_t x,
        int64_t k,
        uintptr_t distances,
        uintptr_t labels,
        uintptr_t params_address) const {
    index_->search(
            n,
            reinterpret_cast<const float*>(x),
            k,
            reinterpret_cast<float*>(distances),
            reinterpret_cast<Index::idx_t*>(labels),
            params_at(params_address));
}

RangeResult* IndexIVFCCDHandle::range_search(
        int64_t n,
        uintptr_t x,
        float radius,
        uintptr_t params_address) const {
    FAISS_THROW_IF_NOT_MSG(n >= 0, "IndexIVFCCD.range_search: n must be >= 0");
    auto result = std::make_unique<RangeResult>(n);
    index_->range_search(
            n,
            reinterpret_cast<const float*>(x),
            radius,
            result->get(),
            params_at(params_address));
    return result.release();
}

bool IndexIVFCCDHandle::uses_scanners() const {
    return index_->uses_scanners();
}

uint32_t IndexIVFCCDHandle::table_id() const {
    return index_->table_id;
}

} // namespace python
} // namespace ccd
} // namespace faiss
