/**
 * SharedVisitedTable: one thread's VisitedTable for HNSW queries over
 * tables of different sizes.
 *
 * FAISS's VisitedTable marks a node visited by writing the current visit
 * number into its byte; HNSW::search advances the number after a query,
 * and VisitedTable::advance wipes the whole table when the number wraps
 * (every 249 advances). Shared by every table a thread searches, that
 * table would be as long as the largest table the thread ever searched
 * and wiped whole every 249 queries, small tables' queries included.
 *
 * Here the wrap is taken before FAISS's advance could reach it, and wipes
 * only the bytes queries since the last wipe could have marked (the
 * longest of their tables); at that point a table more than twice as long
 * as those queries needed (and over kKeepBytes) shrinks to what they
 * needed, so a thread that searched a large table once gives it back.
 *
 * Invariants, kept by for_query: every byte at or beyond `dirty_` is 0,
 * and visno + the query's advances stays below FAISS's wrap, so FAISS
 * never wipes the table itself.
 *
 * Thread contract: one thread (a thread_local).
 */

#pragma once

#include <faiss/impl/AuxIndexStructures.h>

#include <cstddef>

namespace faiss {
namespace ccd {

class SharedVisitedTable {
   public:
    /// kWrap: VisitedTable::advance's wrap in FAISS 1.7.3.
    static constexpr int kWrap = 250;
    /// kKeepBytes: a table this long is never shrunk.
    static constexpr size_t kKeepBytes = 64 * 1024;

    /// for_query: the table, ready for a query over `ntotal` nodes that
    /// advances the visit number at most `advances` times (HNSW::search:
    /// once per level it searches with upper_beam > 1, once otherwise):
    /// no node below `ntotal` reads as visited.
    VisitedTable& for_query(size_t ntotal, int advances);

    /// length: bytes the table holds now.
    size_t length() const {
        return vt_.visited.size();
    }
    /// wiped_bytes: bytes wiped so far (for tests).
    size_t wiped_bytes() const {
        return wiped_;
    }

   private:
    VisitedTable vt_{0};
    size_t dirty_ = 0; ///< marks since the last wipe lie below this
    int given_ = 0;    ///< visno when the last query started
    size_t wiped_ = 0;
};

} // namespace ccd
} // namespace faiss
