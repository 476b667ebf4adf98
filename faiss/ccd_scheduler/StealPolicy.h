/**
 * StealPolicy: who an idle worker steals from, in which order, and when it
 * may cross to another CCD. Pure policy: no atomics, no threads, no queues;
 * the pool asks, a unit test or a simulator can ask just the same.
 *
 * Policies (chosen at pool construction so benchmarks compare like with like
 * on one code base):
 *  - ccd:         place by MappingId; steal from siblings on the same CCD
 *                 first; cross to another CCD only when every sibling was
 *                 empty, only from a CCD whose backlog reaches a threshold,
 *                 and with exponential backoff after failed cross rounds.
 *  - flat_steal:  topology-blind: place round-robin over all workers, steal
 *                 from any worker in random order (brpc bthread's scheme).
 *  - round_robin: place round-robin over all workers, never steal (the
 *                 production baseline for co-located HNSW tables).
 */

#pragma once

#include <faiss/ccd_scheduler/Topology.h>

#include <cstdint>
#include <string>
#include <vector>

namespace faiss {
namespace ccd {

enum class PolicyKind { ccd, flat_steal, round_robin };

/// policy_name: "ccd", "flat" or "rr".
const char* policy_name(PolicyKind kind);

/// policy_from_name: "ccd"; "flat" or "flat_steal"; "rr" or "round_robin"
/// (case-insensitive). Throws std::invalid_argument naming the bad name.
PolicyKind policy_from_name(const std::string& name);

/// StealConfig: the thresholds of the ccd policy.
struct StealConfig {
    /// A remote CCD is a victim only when its queued tasks, summed over its
    /// workers, reach this. 1 steals any queued task once the own CCD is
    /// dry; larger values keep more work at home at some cost in latency.
    int64_t cross_ccd_threshold = 1;
    /// After k failed cross-CCD rounds in a row, the next 2^min(k, this)-1
    /// rounds skip the cross-CCD step. 6 caps the skip at 63 rounds, a few
    /// microseconds of local polling: enough to stop idle workers from
    /// hammering remote queue heads, short enough not to strand work.
    int max_backoff_shift = 6;
};

/// CrossCcdBackoff: exponential backoff between failed cross-CCD steal
/// rounds of one worker. Pure state; owned by one worker.
class CrossCcdBackoff {
   public:
    explicit CrossCcdBackoff(int max_shift) : max_shift_(max_shift) {}

    /// should_try: consumes one round; true when this round may cross.
    bool should_try() {
        if (skip_ > 0) {
            skip_--;
            return false;
        }
        return true;
    }
    void on_failure() {
        if (shift_ < max_shift_) {
            shift_++;
        }
        skip_ = (int64_t(1) << shift_) - 1;
    }
    void on_success() {
        shift_ = 0;
        skip_ = 0;
    }
    /// reset: forget past failures (e.g. after the worker slept).
    void reset() {
        on_success();
    }
    int64_t rounds_to_skip() const {
        return skip_;
    }

   private:
    int max_shift_;
    int shift_ = 0;
    int64_t skip_ = 0;
};

/// Permutation: visits 0..n-1 once each, from a random start with a stride
/// coprime to n (brpc's trick: a fresh order per round without a shuffle).
class Permutation {
   public:
    Permutation(int n, uint64_t seed);
    /// at: the i-th index visited, 0 <= i < n.
    int at(int i) const {
        return int((start_ + uint64_t(i) * stride_) % uint64_t(n_));
    }

   private:
    int n_;
    uint64_t start_;
    uint64_t stride_;
};

class StealPolicy {
   public:
    StealPolicy(const Topology& topology, PolicyKind kind, StealConfig config);

    PolicyKind kind() const {
        return kind_;
    }
    const StealConfig& config() const {
        return config_;
    }
    /// steals: false for round_robin.
    bool steals() const {
        return kind_ != PolicyKind::round_robin;
    }
    /// places_by_id: true when the dispatcher honours MappingIds (ccd only).
    bool places_by_id() const {
        return kind_ == PolicyKind::ccd;
    }

    /// near_victims: whom `worker` tries first. ccd: its CCD siblings.
    /// flat_steal: every other worker. round_robin: nobody.
    const std::vector<int>& near_victims(int worker) const {
        return near_[worker];
    }

    /// remote_ccds: the CCDs `worker` may cross to after its near victims
    /// came up empty. ccd: every other CCD. Otherwise: none.
    const std::vector<int>& remote_ccds(int worker) const {
        return remote_[worker];
    }

    /// remote_ccd_is_victim: whether a remote CCD holding `backlog` queued
    /// tasks may be stolen from.
    bool remote_ccd_is_victim(int64_t backlog) const {
        return backlog >= config_.cross_ccd_threshold && backlog > 0;
    }

   private:
    PolicyKind kind_;
    StealConfig config_;
    std::vector<std::vector<int>> near_;
    std::vector<std::vector<int>> remote_;
};

} // namespace ccd
} // namespace faiss
