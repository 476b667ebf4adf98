/**
 * IndexIVFCCDHandle: what Python's faiss_ccd.IndexIVFCCD (and the parallel
 * mode of a stock faiss.IndexIVF) holds: an IndexIVFCCD over an index that
 * the faiss module created, searched through a PoolHandle's pool.
 *
 * Addresses. Arrays and FAISS objects arrive as addresses (numpy's data
 * pointer, int(index.this)): the Python layer has checked their types,
 * shapes and dtypes and keeps them alive across the call. An index address
 * is the object's faiss::Index base, which FAISS always puts first.
 *
 * Two copies of FAISS. The faiss module links its own FAISS, this module
 * another one of the same version and build (both Debian's 1.7.3). The
 * index's virtual functions run faiss's copy; the scans run ours, on the
 * same objects. dynamic_cast across the two works because libstdc++
 * compares type_info by name.
 *
 * Thread contract: search() and range_search() from any number of threads
 * at once (the SWIG module calls them without the GIL); as in FAISS, the
 * index must not be modified while they run.
 */

#pragma once

#include "PoolHandle.h"

#include <faiss/IndexIVFCCD.h>
#include <faiss/impl/AuxIndexStructures.h>

#include <cstdint>
#include <memory>

namespace faiss {
namespace ccd {
namespace python {

/// RangeResult: a range search's answer, copied out by the Python layer
/// once it knows the sizes.
class RangeResult {
   public:
    explicit RangeResult(int64_t nq);
    /// total: lims[nq], the number of (distance, label) pairs.
    int64_t total() const;
    /// copy_to: lims (nq + 1 int64), distances (total float32) and labels
    /// (total int64).
    void copy_to(uintptr_t lims, uintptr_t distances, uintptr_t labels) const;

    // C++ side only
    RangeSearchResult* get() {
        return &result_;
    }

   private:
    RangeSearchResult result_;
};

class IndexIVFCCDHandle {
   public:
    /// IndexIVFCCDHandle: `index_address` must be a faiss::IndexIVF (not
    /// owned).
    IndexIVFCCDHandle(
            PoolHandle& pool,
            uintptr_t index_address,
            uint32_t table_id);

    /// search: x n*d float32, distances n*k float32, labels n*k int64;
    /// params_address 0 or a faiss::SearchParameters.
    void search(
            int64_t n,
            uintptr_t x,
            int64_t k,
            uintptr_t distances,
            uintptr_t labels,
            uintptr_t params_address) const;

    /// range_search: a new RangeResult (the caller owns it).
    RangeResult* range_search(
            int64_t n,
            uintptr_t x,
            float radius,
            uintptr_t params_address) const;

    bool uses_scanners() const;
    uint32_t table_id() const;

   private:
    std::unique_ptr<IndexIVFCCD> index_;
};

} // namespace python
} // namespace ccd
} // namespace faiss
