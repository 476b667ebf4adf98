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
 *
 * The three decisions the pool makes per task are member functions here,
 * so that the pool, a unit test and the simulator (tools/scale_model/) run the
 * same code:
 *  - dispatch_target: which worker a submitted task is queued on;
 *  - wake_helper:     which parked worker to wake beside a busy target;
 *  - steal_round:     whom an idle worker robs, in which order, and when
 *                     it may cross to another CCD (with its backoff).
 * Their inputs are values (topology, worker, random state) and callables
 * that answer a question about the world (is this queue non-empty: "try to
 * steal"; how many tasks does CCD c hold: "backlog"). The policy decides
 * the order of the questions and what follows from the answers; it keeps
 * no state of its own between calls (the random state and the backoff are
 * the caller's). Templates, so the pool's hot path gets them inlined and
 * allocation-free.
 */

#pragma once

#include <faiss/ccd_scheduler/Mapping.h>
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
    /// kCcdWorkers: cross_ccd_threshold's default, resolved per CCD to
    /// that CCD's number of workers.
    static constexpr int64_t kCcdWorkers = -1;
    /// A remote CCD is a victim only when its queued tasks, summed over its
    /// workers, reach this. 1 steals any queued task once the own CCD is
    /// dry; larger values keep more work at home at some cost in latency.
    /// Default kCcdWorkers: a CCD is robbed only once it holds at least
    /// as many queued tasks as it has workers. The scale model chose it
    /// (docs/SIMULATION.md, "V2's cross-CCD threshold", has the figures):
    /// on 12 CCDs x 8 it lifts the skewed HNSW workload and cuts its
    /// cross-CCD steals against a threshold of 1, and costs IVF nothing.
    /// With one worker per CCD it is 1. The price: while every worker of a
    /// CCD runs something, up to threshold - 1 tasks queued there wait for
    /// one of them, even with other CCDs idle (searches do not wait on
    /// that: their calling thread scans what no helper takes). Pools that
    /// run long blocking tasks of their own may prefer 1.
    int64_t cross_ccd_threshold = kCcdWorkers;
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

/// policy_random: the policies' random source (xorshift64; `state` must
/// not be 0). The pool keeps one state per worker (worker_random_seed) and
/// one rotor per submitting thread; a simulator keeps the same.
inline uint64_t policy_random(uint64_t& state) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/// worker_random_seed: the initial random state of worker `w` of a pool
/// (so a simulator can replay a worker's victim order for a seed).
inline uint64_t worker_random_seed(int w) {
    return hash_mapping_id(uint64_t(w) + 0x5eed) | 1;
}

/// submitter_rotor_seed: the initial dispatch rotor of a submitting thread,
/// from a key of the thread (the pool: std::hash of its thread id). Well
/// mixed, because thread ids are aligned addresses whose low bits alone
/// would start every thread on the same worker.
inline uint32_t submitter_rotor_seed(uint64_t thread_key) {
    return uint32_t(hash_mapping_id(thread_key));
}

/// StealOutcome: what one steal round found. victim -1: nothing.
template <class T>
struct StealOutcome {
    T item{};
    int victim = -1;
    bool cross_ccd = false; ///< the victim is on another CCD than the thief
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

    /// cross_ccd_threshold: the backlog at which CCD `ccd` becomes a
    /// victim for the other CCDs (the config's value, or the CCD's worker
    /// count for kCcdWorkers).
    int64_t cross_ccd_threshold(int ccd) const {
        return threshold_[ccd];
    }

    /// remote_ccd_is_victim: whether remote CCD `ccd`, holding `backlog`
    /// queued tasks, may be stolen from.
    bool remote_ccd_is_victim(int ccd, int64_t backlog) const {
        return backlog >= threshold_[ccd] && backlog > 0;
    }

    /// dispatch_target: the worker a task is queued on.
    ///  - mapped_ccd: the task's CCD from the mapping, when the policy
    ///    places by id and the task has an id (else -1, and not used);
    ///  - local: the task is kLocalMappingId;
    ///  - self: the submitting worker, -1 for a thread outside the pool;
    ///  - rotor: the submitter's round-robin position (advanced when used);
    ///  - avoid_cpu_of_caller: skip the worker pinned to the caller's CPU;
    ///  - caller_cpu(): that CPU, asked only when it matters (it costs a
    ///    system call on some machines).
    /// ccd: a worker of the mapped CCD submits to itself (its deque, where
    /// siblings still steal it); others go round-robin over that CCD's
    /// workers, passing over the one pinned to the caller's own CPU (it
    /// could start only by taking the CPU from the caller, who usually
    /// keeps working). flat_steal: a worker keeps its own children
    /// (bthread); local tasks of a worker stay too. Otherwise round-robin
    /// over every worker.
    template <class CallerCpu>
    int dispatch_target(
            const Topology& topology,
            int mapped_ccd,
            bool local,
            int self,
            uint32_t& rotor,
            bool avoid_cpu_of_caller,
            CallerCpu caller_cpu) const {
        if (places_by_id() && !local) {
            if (self >= 0 && topology.ccd_of(self) == mapped_ccd) {
                return self;
            }
            const int first = topology.first_worker(mapped_ccd);
            const int n = topology.ccd_size(mapped_ccd);
            if (n == 1) {
                return first;
            }
            const int w = first + int(rotor++ % uint32_t(n));
            if (avoid_cpu_of_caller && topology.cpu_of(w) >= 0 &&
                topology.cpu_of(w) == caller_cpu()) {
                return first + (w - first + 1) % n;
            }
            return w;
        }
        if (self >= 0 && (local || kind_ == PolicyKind::flat_steal)) {
            return self;
        }
        return int(rotor++ % uint32_t(topology.num_workers()));
    }

    /// wake_helper: a task was queued on `target`, which is awake (or
    /// could not be woken); wake one parked worker that may steal it:
    /// target's near victims in a random order (the relation is
    /// symmetric: they are the ones that rob target first), then, when
    /// target's CCD backlog would make it a victim for remote CCDs, the
    /// workers of those CCDs in order. try_unpark(w) wakes w if it is
    /// parked and says whether it did; ccd_backlog(c) counts CCD c's queued
    /// tasks. Returns the worker woken, or -1. rotor seeds the order (it
    /// advances once when there are near victims).
    template <class TryUnpark, class CcdBacklog>
    int wake_helper(
            const Topology& topology,
            int target,
            uint32_t& rotor,
            TryUnpark try_unpark,
            CcdBacklog ccd_backlog) const {
        if (!steals()) {
            return -1;
        }
        const std::vector<int>& near = near_[target];
        if (!near.empty()) {
            Permutation order(int(near.size()), hash_mapping_id(rotor++));
            for (int i = 0; i < int(near.size()); i++) {
                const int v = near[order.at(i)];
                if (try_unpark(v)) {
                    return v;
                }
            }
        }
        const std::vector<int>& remote = remote_[target];
        if (remote.empty() ||
            !remote_ccd_is_victim(
                    topology.ccd_of(target),
                    ccd_backlog(topology.ccd_of(target)))) {
            return -1;
        }
        for (int c : remote) {
            for (int i = 0; i < topology.ccd_size(c); i++) {
                const int v = topology.first_worker(c) + i;
                if (try_unpark(v)) {
                    return v;
                }
            }
        }
        return -1;
    }

    /// steal_round: one round of worker w's search for work after its own
    /// queue came up empty. Near victims in a fresh random order; then,
    /// only when every near victim was empty and the backoff allows
    /// (ignore_backoff: the last look before parking), remote CCDs in a
    /// random order, each only when its backlog passes the threshold, its
    /// workers in a random order. A successful cross round resets the
    /// backoff, a failed one extends it. try_steal(v) takes a task from
    /// worker v's queue (T{} when empty); ccd_backlog(c) as above; rng is
    /// w's random state (policy_random).
    template <class T, class TrySteal, class CcdBacklog>
    StealOutcome<T> steal_round(
            const Topology& topology,
            int w,
            uint64_t& rng,
            CrossCcdBackoff& backoff,
            bool ignore_backoff,
            TrySteal try_steal,
            CcdBacklog ccd_backlog) const {
        StealOutcome<T> out;
        const std::vector<int>& near = near_[w];
        if (!near.empty()) {
            Permutation order(int(near.size()), policy_random(rng));
            for (int i = 0; i < int(near.size()); i++) {
                const int v = near[order.at(i)];
                if (T item = try_steal(v)) {
                    out.item = item;
                    out.victim = v;
                    // flat_steal's near victims span CCDs.
                    out.cross_ccd = topology.ccd_of(v) != topology.ccd_of(w);
                    return out;
                }
            }
        }
        const std::vector<int>& remote = remote_[w];
        if (remote.empty() || !(ignore_backoff || backoff.should_try())) {
            return out;
        }
        Permutation ccd_order(int(remote.size()), policy_random(rng));
        for (int i = 0; i < int(remote.size()); i++) {
            const int c = remote[ccd_order.at(i)];
            if (!remote_ccd_is_victim(c, ccd_backlog(c))) {
                continue;
            }
            const int first = topology.first_worker(c);
            Permutation order(topology.ccd_size(c), policy_random(rng));
            for (int j = 0; j < topology.ccd_size(c); j++) {
                const int v = first + order.at(j);
                if (T item = try_steal(v)) {
                    out.item = item;
                    out.victim = v;
                    out.cross_ccd = true;
                    backoff.on_success();
                    return out;
                }
            }
        }
        backoff.on_failure();
        return out;
    }

   private:
    PolicyKind kind_;
    StealConfig config_;
    std::vector<std::vector<int>> near_;
    std::vector<std::vector<int>> remote_;
    std::vector<int64_t> threshold_; ///< per CCD, kCcdWorkers resolved
};

} // namespace ccd
} // namespace faiss
