/**
 * HNSWTablesHandle: what Python's faiss_ccd.HNSWTables holds: an
 * HNSWTables on a PoolHandle's pool, its queries reporting traffic to the
 * pool's monitor.
 *
 * Indexes are registered by address and not owned: the Python layer keeps
 * each faiss.IndexHNSW object referenced until remove_table() has returned,
 * and remove_table() returns only once no query uses the table any more.
 * submit() writes into arrays the Python layer keeps alive until the
 * ticket's completion has been popped.
 *
 * Thread contract: every method from any thread (the SWIG module calls
 * them without the GIL).
 */

#pragma once

#include "Completions.h"
#include "PoolHandle.h"

#include <faiss/HNSWTables.h>

#include <cstdint>
#include <memory>

namespace faiss {
namespace ccd {
namespace python {

class HNSWTablesHandle {
   public:
    explicit HNSWTablesHandle(PoolHandle& pool);

    /// add_table: `index_address` a faiss::IndexHNSW; ef_search -1: the
    /// index's own.
    void add_table(uint32_t table_id, uintptr_t index_address, int ef_search);
    /// remove_table: unregister, then wait until no query uses the table.
    void remove_table(uint32_t table_id);

    /// search: n queries of dimension d (checked), blocking.
    void search(
            uint32_t table_id,
            int64_t n,
            uintptr_t x,
            int d,
            int64_t k,
            uintptr_t distances,
            uintptr_t labels,
            uintptr_t params_address) const;

    /// submit: n queries (copied), each its own task; when the last is
    /// done, `ticket` arrives in `completions` (ok, or the first error).
    /// Input errors throw here, before anything is submitted, and nothing
    /// arrives for the ticket; a failure after that (the table removed
    /// meanwhile) arrives as the ticket's error.
    void submit(
            uint32_t table_id,
            int64_t n,
            uintptr_t x,
            int d,
            int64_t k,
            uintptr_t distances,
            uintptr_t labels,
            uintptr_t params_address,
            int64_t ticket,
            Completions& completions) const;

   private:
    std::unique_ptr<HNSWTables> tables_;
};

} // namespace python
} // namespace ccd
} // namespace faiss
