#include <faiss/ccd_scheduler/TrafficWindow.h>

#include <cmath>
#include <stdexcept>

namespace faiss {
namespace ccd {

TrafficWindow::TrafficWindow(double window_s, double bucket_s)
        : window_s_(window_s), bucket_s_(bucket_s) {
    if (!(bucket_s > 0) || !(window_s >= bucket_s)) {
        throw std::invalid_argument(
                "TrafficWindow: need 0 < bucket_s <= window_s");
    }
    nbuckets_ = int64_t(std::ceil(window_s / bucket_s));
}

int64_t TrafficWindow::bucket_of(double t) const {
    return int64_t(std::floor(t / bucket_s_));
}

void TrafficWindow::add(double t, MappingId id, uint64_t bytes) {
    advance(t);
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
