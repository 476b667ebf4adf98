/**
 * TrafficWindow: bytes per MappingId over a sliding time window.
 *
 * The window is a ring of fixed-width time buckets; each bucket keeps the
 * bytes recorded in it per id, and a running total per id is kept beside
 * them, so totals() costs nothing and expiring a bucket costs its own size.
 * Pure data structure: single-threaded (the Monitor owns its windows and
 * touches them only under its own lock).
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>

namespace faiss {
namespace ccd {

class TrafficWindow {
   public:
    using Totals = std::unordered_map<MappingId, uint64_t>;

    static constexpr double kMinBucketS = 1e-6;
    static constexpr double kMaxBuckets = 1e7;

    /// TrafficWindow: covers the last `window_s` seconds in buckets of
    /// `bucket_s`. Throws std::invalid_argument unless
    /// kMinBucketS <= bucket_s <= window_s and window_s / bucket_s <=
    /// kMaxBuckets (so NaN and infinity too).
    TrafficWindow(double window_s, double bucket_s);

    /// add: `bytes` of traffic on `id` at time t. Times that go backwards
    /// are taken as the latest time seen.
    void add(double t, MappingId id, uint64_t bytes);

    /// advance: forget what is older than the window at time t.
    void advance(double t);

    const Totals& totals() const {
        return totals_;
    }
    uint64_t total_bytes() const {
        return total_bytes_;
    }
    double window_s() const {
        return window_s_;
    }

   private:
    int64_t bucket_of(double t) const;

    double window_s_;
    double bucket_s_;
    int64_t nbuckets_;
    int64_t latest_ = INT64_MIN;
    std::deque<std::pair<int64_t, Totals>> buckets_; ///< oldest first
    Totals totals_;
    uint64_t total_bytes_ = 0;
};

} // namespace ccd
} // namespace faiss
