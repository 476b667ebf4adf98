/**
 * WorkStealingDeque: the owner's LIFO stack of tasks that other workers may
 * steal from the FIFO end.
 *
 * Algorithm: Chase and Lev, "Dynamic Circular Work-Stealing Deque" (SPAA
 * 2005), with the C11 memory orders of Le, Pop, Cohen and Zappa Nardelli,
 * "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013).
 *
 * Departures from the papers:
 *  - Fixed capacity (a power of two), no growth: push() returns false when
 *    full and the caller takes the overflow path (RunQueue). Growth would
 *    need deferred reclamation of old arrays; a bounded ring plus a locked
 *    overflow list is simpler and the overflow is rare.
 *  - The stores of `bottom_` (push() and pop()) are release stores rather
 *    than a release fence followed by a relaxed store. Same cost on x86, and
 *    ThreadSanitizer, which does not model fences, then sees the
 *    happens-before edge from the owner's writes of a task to the thief.
 *  - Slots are atomics (relaxed): a thief may read a slot the owner is about
 *    to reuse; the value is discarded when its CAS on `top_` fails, and
 *    atomics keep that benign read out of data-race territory.
 *
 * Thread contract: push() and pop() by the owner only; steal() and
 * size_estimate() by any thread.
 *
 * Invariant: top_ <= bottom_ + 1 at all times, and the live tasks are the
 * slots [top_, bottom_). A slot is overwritten only by push() at index
 * bottom_, which requires bottom_ - top_ < capacity, so a slot at or above
 * top_ is never overwritten while a thief may still claim it.
 */

#pragma once

#include <faiss/ccd_scheduler/Task.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace faiss {
namespace ccd {

class WorkStealingDeque {
   public:
    explicit WorkStealingDeque(uint32_t capacity = 4096)
            : mask_(checked_capacity(capacity) - 1),
              slots_(new std::atomic<TaskNode*>[capacity]) {
        for (uint32_t i = 0; i < capacity; i++) {
            slots_[i].store(nullptr, std::memory_order_relaxed);
        }
    }

    WorkStealingDeque(const WorkStealingDeque&) = delete;
    WorkStealingDeque& operator=(const WorkStealingDeque&) = delete;

    /// push: owner only. False when full (the task was not taken).
    bool push(TaskNode* task) {
        int64_t b = bottom_.load(std::memory_order_relaxed);
        // acquire: pairs with the thieves' CAS on top_, so the slot we are
        // about to overwrite has really been consumed.
        int64_t t = top_.load(std::memory_order_acquire);
        if (b - t > int64_t(mask_)) {
            return false;
        }
        slots_[b & mask_].store(task, std::memory_order_relaxed);
        // release: publishes the slot and the task's contents to thieves,
        // who load bottom_ with acquire.
        bottom_.store(b + 1, std::memory_order_release);
        return true;
    }

    /// pop: owner only. The most recently pushed task, or nullptr.
    TaskNode* pop() {
        int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        bottom_.store(b, std::memory_order_relaxed);
        // seq_cst fence: the store to bottom_ above and the load of top_
        // below must not be reordered (store-load), or the owner and a thief
        // could both take the last task.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        int64_t t = top_.load(std::memory_order_relaxed);
        // The restoring stores of bottom_ below are release stores, like
        // push()'s: under C++20 rules a relaxed store would end the release
        // sequence that hands earlier pushes to thieves (free on x86).
        if (t > b) { // empty
            bottom_.store(b + 1, std::memory_order_release);
            return nullptr;
        }
        TaskNode* task = slots_[b & mask_].load(std::memory_order_relaxed);
        if (t == b) {
            // Last task: race the thieves for it on top_.
            if (!top_.compare_exchange_strong(
                        t,
                        t + 1,
                        std::memory_order_seq_cst,
                        std::memory_order_relaxed)) {
                task = nullptr; // a thief took it
            }
            bottom_.store(b + 1, std::memory_order_release);
        }
        return task;
    }

    /// steal: any thread. The oldest task, or nullptr when empty or when
    /// another thread won the race for it.
    TaskNode* steal() {
        // acquire on top_: orders this load before the fence; acquire on
        // bottom_: pairs with push()'s release store (sees the slot).
        int64_t t = top_.load(std::memory_order_acquire);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        int64_t b = bottom_.load(std::memory_order_acquire);
        if (t >= b) {
            return nullptr;
        }
        TaskNode* task = slots_[t & mask_].load(std::memory_order_relaxed);
        // seq_cst CAS: decides the race with pop() and other thieves; the
        // winner alone owns the task.
        if (!top_.compare_exchange_strong(
                    t,
                    t + 1,
                    std::memory_order_seq_cst,
                    std::memory_order_relaxed)) {
            return nullptr;
        }
        return task;
    }

    /// size_estimate: any thread; exact only when no one else is active.
    int64_t size_estimate() const {
        int64_t b = bottom_.load(std::memory_order_relaxed);
        int64_t t = top_.load(std::memory_order_relaxed);
        return b > t ? b - t : 0;
    }

    uint32_t capacity() const {
        return mask_ + 1;
    }

   private:
    /// checked_capacity: validates before anything is allocated.
    static uint32_t checked_capacity(uint32_t capacity) {
        if (capacity < 2 || (capacity & (capacity - 1)) != 0) {
            throw std::invalid_argument(
                    "WorkStealingDeque capacity must be a power of two >= 2");
        }
        return capacity;
    }

    // top_ and bottom_ on their own cache lines: thieves hammer top_, the
    // owner writes bottom_ on every push and pop.
    alignas(64) std::atomic<int64_t> top_{0};
    alignas(64) std::atomic<int64_t> bottom_{0};
    alignas(64) const uint32_t mask_;
    std::unique_ptr<std::atomic<TaskNode*>[]> slots_;
};

} // namespace ccd
} // namespace faiss
