#include <faiss/ccd_scheduler/TrafficWindow.h>

#include <cmath>
#include <stdexcept>

namespace faiss {
namespace ccd {

TrafficWindow::TrafficWindow(double window_s, double bucket_s)
        : window_s_(window_s), bucket_s_(bucket_s) {
    // Bounds that keep every bucket index an int64_t (fuzz_scheduler_config
    // found both overflows: an infinite window, a denormal bucket).
    if (!(bucket_s >= kMinBucketS) || !(window_s >= bucket_s) ||
        !(window_s / bucket_s <= kMaxBuckets)) {
        throw std::invalid_argument(
                "TrafficWindow: need 1e-6 <= bucket_s <= window_s, and at "
                "most 1e7 buckets in the window");
    }
    nbuckets_ = int64_t(std::ceil(window_s / bucket_s));
}

int64_t TrafficWindow::bucket_of(double t) const {
    // Saturated: a clock 2^63 buckets from its epoch (292,000 years of
    // microsecond buckets) stays in range, and so does a NaN.
    const double b = std::floor(t / bucket_s_);
    const double limit = 4e18;
    return b >= -limit && b <= limit ? int64_t(b)
            : b < 0                  ? -int64_t(limit)
                                     : int64_t(limit);
}

void TrafficWindow::add(double t, MappingId id, uint64_t bytes) {
    advance(t);
    if (bytes == 0) {
        // No traffic, and no entry: a zero total would be erased by the
        // first of two expiring buckets, and the second would find none
        // (fuzz_scheduler_config's zero-bytes: HNSWTables records 0 bytes
        // for a search of an empty table).
        return;
    }
    if (buckets_.empty() || buckets_.back().first != latest_) {
        buckets_.emplace_back(latest_, Totals());
    }
    buckets_.back().second[id] += bytes;
    totals_[id] += bytes;
    total_bytes_ += bytes;
}

void TrafficWindow::advance(double t) {
    const int64_t b = bucket_of(t);
    if (b > latest_) {
        latest_ = b;
    }
    // Keep buckets (latest_ - nbuckets_, latest_]: the window's length.
    while (!buckets_.empty() && buckets_.front().first <= latest_ - nbuckets_) {
        for (const auto& [id, bytes] : buckets_.front().second) {
            auto it = totals_.find(id);
            it->second -= bytes;
            if (it->second == 0) {
                totals_.erase(it);
            }
            total_bytes_ -= bytes;
        }
        buckets_.pop_front();
    }
}

} // namespace ccd
} // namespace faiss
