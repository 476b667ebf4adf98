/**
 * TrafficSink: where a task reports the memory it touched, so that the
 * placement can follow the traffic.
 *
 * IVF: one record per list scan (or chunk of one): vectors scanned and bytes
 * = vectors * (code_size + sizeof(idx_t)). HNSW: one record per query: nodes
 * touched and their bytes. The monitor (traffic accounting and re-mapping)
 * implements it; a test can implement it with counters.
 *
 * Thread contract: record() is called concurrently from every worker, once
 * per task, on the search path: implementations must be thread-safe, cheap
 * and must not throw.
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <cstdint>

namespace faiss {
namespace ccd {

class TrafficSink {
   public:
    virtual ~TrafficSink() = default;
    virtual void
    record(MappingId id, uint64_t items, uint64_t bytes) noexcept = 0;
};

} // namespace ccd
} // namespace faiss
