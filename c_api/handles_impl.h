/**
 * handles_impl.h (private, not installed): what the opaque handles shared
 * between several files of the C API hold. Each holds its object by
 * shared_ptr, so that handles built on it keep it alive.
 */

#pragma once

#include "faiss_ccd_c.h"

#include <faiss/Index.h>
#include <faiss/ccd_scheduler/Runtime.h>

#include <memory>
#include <type_traits>

static_assert(
        std::is_same<faiss::Index::idx_t, faiss_ccd_idx_t>::value,
        "faiss_ccd_idx_t must be FAISS's idx_t");

/// index_of: FAISS's C API handles are the C++ objects themselves.
inline faiss::Index* index_of(FaissIndex* index) {
    return reinterpret_cast<faiss::Index*>(index);
}

/// A C pool is a Runtime: the pool and the monitor that re-maps its keys.
struct FaissCcdPool_H {
    std::shared_ptr<faiss::ccd::Runtime> runtime;
};
