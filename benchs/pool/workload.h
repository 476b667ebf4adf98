/**
 * workload.h: what every contender of bench_pool runs, so that all of them
 * run exactly the same thing: the clock, the tiny task of scenario (a), the
 * uneven fork-join tree of scenario (b), and the Tally that checks that each
 * task ran exactly once.
 */

#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace bench {

/// now_ns: steady_clock (clock_gettime(CLOCK_MONOTONIC) through the vDSO on
/// Linux, ~20 ns a call), in nanoseconds.
inline int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

/// mix64: splitmix64's finaliser; every "random" choice of the workloads is
/// a deterministic function of it.
inline uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// spin_work: `rounds` dependent multiply-xorshift steps (~1 ns each on a
/// current core). The result must be used, or the loop is dead code.
inline uint64_t spin_work(uint64_t x, int rounds) {
    for (int i = 0; i < rounds; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        x ^= x >> 29;
    }
    return x;
}

/**
 * Tally: counts, per executing thread, the tasks run and the sum of their
 * keys, so that a run can be checked against the expected count and key sum
 * (a task lost or run twice changes both) without a shared counter that
 * would bounce between cores on every task.
 *
 * Each thread takes a slot on first use and hands it back when it exits;
 * slots keep their values, so counts of threads that exited (submitters,
 * workers of a destroyed pool) still add up. reset() and total() only while
 * no task runs (between repetitions).
 */
class Tally {
   public:
    static constexpr int kSlots = 256;

    /// add: the calling thread ran a task with this key. Owner-only slot:
    /// a relaxed load and store, no locked instruction.
    static void add(uint64_t key, uint64_t sink) {
        Slot& s = my_slot();
        s.count.store(
                s.count.load(std::memory_order_relaxed) + 1,
                std::memory_order_relaxed);
        s.key_sum.store(
                s.key_sum.load(std::memory_order_relaxed) + key,
                std::memory_order_relaxed);
        s.sink.store(sink, std::memory_order_relaxed);
    }

    static void reset() {
        for (Slot& s : slots()) {
            s.count.store(0, std::memory_order_relaxed);
            s.key_sum.store(0, std::memory_order_relaxed);
        }
    }

    struct Totals {
        uint64_t count = 0;
        uint64_t key_sum = 0;
    };
    /// total: the caller must have synchronised with the end of every task
    /// (a join, a group wait), which orders the relaxed stores before it.
    static Totals total() {
        Totals t;
        for (const Slot& s : slots()) {
            t.count += s.count.load(std::memory_order_relaxed);
            t.key_sum += s.key_sum.load(std::memory_order_relaxed);
        }
        return t;
    }

   private:
    struct alignas(64) Slot {
        std::atomic<uint64_t> count{0};
        std::atomic<uint64_t> key_sum{0};
        std::atomic<uint64_t> sink{0}; ///< keeps task work alive
    };

    static std::vector<Slot>& slots() {
        static std::vector<Slot> all(kSlots);
        return all;
    }

    /// Registry: the free slots; a thread's Lease takes one and returns it.
    struct Registry {
        std::mutex mutex;
        std::vector<int> free;
        Registry() {
            for (int i = kSlots - 1; i >= 0; i--) {
                free.push_back(i);
            }
        }
    };
    static Registry& registry() {
        static Registry r;
        return r;
    }

    struct Lease {
        int index;
        Lease() {
            Registry& r = registry();
            std::lock_guard<std::mutex> lock(r.mutex);
            if (r.free.empty()) {
                throw std::runtime_error("Tally: more than 256 live threads");
            }
            index = r.free.back();
            r.free.pop_back();
        }
        ~Lease() {
            Registry& r = registry();
            std::lock_guard<std::mutex> lock(r.mutex);
            r.free.push_back(index);
        }
    };

    static Slot& my_slot() {
        thread_local Lease lease;
        return slots()[lease.index];
    }
};

/// kTinyTaskRounds: the work of one scenario (a) task, a few nanoseconds.
constexpr int kTinyTaskRounds = 4;

/// tiny_task: the body of every scenario (a) throughput task.
inline void tiny_task(uint64_t key) {
    Tally::add(key, spin_work(key, kTinyTaskRounds));
}

/**
 * Tree: the uneven recursive fork-join tree of scenario (b) (the workload of
 * seeds/numa_work_stealing_note.txt: "recursive tree tasks with uneven
 * execution times").
 *
 * A node is a 64-bit key. Its hash decides everything about it: 0 to 4
 * children (uniform, so 2 on average: a branching process that dies out in
 * some subtrees and explodes in others), and 0 to kMaxWork rounds of
 * spin_work (~100 ns on average). The root always has 4 children, and no
 * node below max_depth has any. Each node is one task in every contender.
 */
struct Tree {
    static constexpr int kMaxChildren = 4;
    static constexpr int kMaxWork = 200;

    uint64_t root = 0x5eedULL;
    int max_depth = 0;

    /// children: the keys of a node's children; returns how many.
    int children(uint64_t key, int depth, uint64_t* out) const {
        if (depth >= max_depth) {
            return 0;
        }
        const uint64_t h = mix64(key);
        const int n =
                depth == 0 ? kMaxChildren : int((h >> 8) % (kMaxChildren + 1));
        for (int i = 0; i < n; i++) {
            out[i] = mix64(key * (kMaxChildren + 1) + uint64_t(i) + 1);
        }
        return n;
    }

    /// visit: a node's own work, counted in the Tally; then its children.
    int visit(uint64_t key, int depth, uint64_t* out) const {
        const uint64_t h = mix64(key);
        Tally::add(key, spin_work(h, int(h % (kMaxWork + 1))));
        return children(key, depth, out);
    }

    /// Expected: what a correct run must leave in the Tally.
    struct Expected {
        uint64_t nodes = 0;
        uint64_t key_sum = 0;
    };

    /// expected: counted sequentially (children only, no work).
    Expected expected() const {
        Expected e;
        count(root, 0, e);
        return e;
    }

    /// sized: the tree from `root` whose node count is nearest `target`
    /// (by ratio). The count roughly doubles per level, so it is within
    /// about 1.4x of the target.
    static Tree sized(uint64_t target) {
        Tree best;
        double best_ratio = 0;
        for (int depth = 1; depth < 64; depth++) {
            Tree t;
            t.max_depth = depth;
            const double n = double(t.expected().nodes);
            const double ratio = n > double(target) ? n / double(target)
                                                    : double(target) / n;
            if (best.max_depth == 0 || ratio < best_ratio) {
                best = t;
                best_ratio = ratio;
            }
            if (n >= double(target)) {
                return best;
            }
        }
        throw std::runtime_error("Tree::sized: the tree died out");
    }

   private:
    void count(uint64_t key, int depth, Expected& e) const {
        e.nodes++;
        e.key_sum += key;
        uint64_t kids[kMaxChildren];
        const int n = children(key, depth, kids);
        for (int i = 0; i < n; i++) {
            count(kids[i], depth + 1, e);
        }
    }
};

} // namespace bench
