#include "placement.h"

#include <faiss/ccd_scheduler/HotColdMapping.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sim {

using faiss::ccd::MappingId;

const char* variant_name(Variant v) {
    switch (v) {
        case Variant::V0:
            return "V0";
        case Variant::V1:
            return "V1";
        case Variant::V2:
            return "V2";
        case Variant::V3:
            return "V3";
    }
    return "?";
}

Placement::Placement(
        Variant variant,
        const faiss::ccd::MonitorConfig& monitor,
        int num_ccds,
        uint64_t l3_bytes,
        const Workload& workload)
        : variant_(variant),
          config_(monitor),
          num_ccds_(num_ccds),
          l3_bytes_(l3_bytes),
          workload_(workload),
          mapping_(std::make_shared<faiss::ccd::HashMapping>()),
          fast_(monitor.fast_window_s, monitor.bucket_s),
          slow_(monitor.slow_window_s, monitor.bucket_s),
          batch_(workload.num_items(), 0),
          last_remap_s_(-std::numeric_limits<double>::infinity()) {}

int Placement::ccd_of(uint32_t item, uint64_t turn) const {
    if (variant_ == Variant::V0 || variant_ == Variant::V1) {
        return -1;
    }
    if (!replicas_.empty()) {
        auto it = replicas_.find(item);
        if (it != replicas_.end()) {
            return it->second[turn % it->second.size()];
        }
    }
    return mapping_->pick_ccd(workload_.id_of(item), num_ccds_);
}

void Placement::record(uint32_t item, uint64_t bytes) {
    batch_[item] += bytes;
}

bool Placement::tick(double now_s) {
    // As Monitor::tick: the buffered records enter both windows at the
    // tick's time, summed per id.
    for (uint32_t i = 0; i < batch_.size(); i++) {
        if (batch_[i] != 0) {
            fast_.add(now_s, workload_.id_of(i), batch_[i]);
            slow_.add(now_s, workload_.id_of(i), batch_[i]);
            batch_[i] = 0;
        }
    }
    fast_.advance(now_s);
    slow_.advance(now_s);
    if (variant_ == Variant::V0 || variant_ == Variant::V1) {
        return false;
    }
    if (variant_ == Variant::V3) {
        return tick_replicated(now_s);
    }
    faiss::ccd::RemapPlan plan;
    if (!faiss::ccd::plan_remap(
                config_,
                fast_,
                slow_,
                *mapping_,
                snapshot_.get(),
                num_ccds_,
                now_s,
                last_remap_s_,
                &plan)) {
        return false;
    }
    snapshot_ = std::make_shared<faiss::ccd::MappingSnapshot>(
            std::move(plan.ids),
            std::move(plan.ccds),
            num_ccds_);
    mapping_ = snapshot_;
    last_remap_s_ = now_s;
    remaps_++;
    traffic_moved_ += plan.record.traffic_moved;
    return true;
}

bool Placement::tick_replicated(double now_s) {
    const uint64_t total = fast_.total_bytes();
    if (num_ccds_ < 2 || total == 0 ||
        now_s - last_remap_s_ < config_.min_remap_interval_s) {
        return false;
    }
    const double share = double(total) / num_ccds_;
    // Parts: each id once, a hot one k times with a k-th of its traffic.
    // Items in index order, so that the result does not depend on the
    // window's hash order.
    std::vector<uint32_t> part_item;
    std::vector<uint64_t> part_traffic;
    std::vector<int> part_current;
    std::vector<double> loads(num_ccds_, 0);
    for (uint32_t item = 0; item < workload_.num_items(); item++) {
        auto it = fast_.totals().find(workload_.id_of(item));
        if (it == fast_.totals().end()) {
            continue;
        }
        const uint64_t traffic = it->second;
        int k = 1;
        if (double(traffic) > share &&
            2 * workload_.item_bytes(item) <= l3_bytes_) {
            k = std::min<int>(
                    num_ccds_,
                    int(std::ceil(double(traffic) / share)));
        }
        auto rep = replicas_.find(item);
        for (int j = 0; j < k; j++) {
            part_item.push_back(item);
            part_traffic.push_back(traffic / uint64_t(k));
            int cur = -1;
            if (rep != replicas_.end()) {
                cur = j < int(rep->second.size()) ? rep->second[j] : -1;
            } else if (j == 0) {
                cur = mapping_->pick_ccd(workload_.id_of(item), num_ccds_);
            }
            part_current.push_back(cur);
        }
        // The load the current placement puts on each CCD.
        if (rep != replicas_.end()) {
            for (int c : rep->second) {
                loads[c] += double(traffic) / rep->second.size();
            }
        } else {
            loads[mapping_->pick_ccd(workload_.id_of(item), num_ccds_)] +=
                    double(traffic);
        }
    }
    const double mean = double(total) / num_ccds_;
    const double before = *std::max_element(loads.begin(), loads.end()) / mean;
    if (before <= config_.imbalance_threshold) {
        return false;
    }
    const std::vector<int> part_ccd = config_.migration_aware
            ? faiss::ccd::map_migration_aware(
                      part_traffic,
                      part_current,
                      num_ccds_,
                      config_.migration_slack)
            : faiss::ccd::map_hot_cold(part_traffic, num_ccds_);
    const double after = faiss::ccd::imbalance(
            faiss::ccd::ccd_loads(part_traffic, part_ccd, num_ccds_));
    if (after > before * 0.99) {
        return false;
    }
    std::vector<MappingId> ids;
    std::vector<int> ccds;
    std::unordered_map<uint32_t, std::vector<int>> replicas;
    for (size_t p = 0; p < part_item.size(); p++) {
        const uint32_t item = part_item[p];
        if (p > 0 && part_item[p - 1] == item) {
            std::vector<int>& r = replicas[item];
            if (r.empty()) {
                r.push_back(ccds.back());
            }
            if (std::find(r.begin(), r.end(), part_ccd[p]) == r.end()) {
                r.push_back(part_ccd[p]);
            }
            continue;
        }
        if (part_ccd[p] != part_current[p]) {
            traffic_moved_ += part_traffic[p];
        }
        ids.push_back(workload_.id_of(item));
        ccds.push_back(part_ccd[p]);
    }
    for (auto it = replicas.begin(); it != replicas.end();) {
        it = it->second.size() < 2 ? replicas.erase(it) : std::next(it);
    }
    snapshot_ = std::make_shared<faiss::ccd::MappingSnapshot>(
            std::move(ids),
            std::move(ccds),
            num_ccds_);
    mapping_ = snapshot_;
    replicas_ = std::move(replicas);
    last_remap_s_ = now_s;
    remaps_++;
    return true;
}

} // namespace sim
