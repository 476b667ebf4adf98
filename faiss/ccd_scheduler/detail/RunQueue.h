/**
 * RunQueue: one worker's queue of runnable tasks. Pure mechanism: it knows
 * nothing of CCDs, policies or workers.
 *
 * Three parts:
 *  - a WorkStealingDeque for tasks the owner submits itself (fork-join:
 *    LIFO for the owner keeps the working set small and hot; FIFO for
 *    thieves hands them the biggest, oldest subtrees);
 *  - a SubmitRing for tasks other threads submit to this worker;
 *  - an overflow list (mutex + deque) for either when its ring is full, so
 *    a burst never drops a task and never blocks a submitter for long.
 *
 * Thread contract: push_local() and pop_local() by the owner only;
 * push_external(), steal(), size_estimate() and pushes_total() by any
 * thread.
 *
 * Exactly once: every task pushed is held by exactly one of the three parts
 * until exactly one pop_local() or steal() returns it (each part guarantees
 * it; the overflow under its mutex). A push that throws (out of memory in
 * the overflow) leaves the task with the caller and uncounted.
 */

#pragma once

#include <faiss/ccd_scheduler/detail/SubmitRing.h>
#include <faiss/ccd_scheduler/detail/WorkStealingDeque.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>

namespace faiss {
namespace ccd {

class RunQueue {
   public:
    RunQueue(uint32_t deque_capacity, uint32_t ring_capacity)
            : deque_(deque_capacity), ring_(ring_capacity) {}

    /// push_local: owner only.
    void push_local(TaskNode* task) {
        // Owner-only counter: a relaxed load and a release store, no RMW.
        // release: a reader of pushes_total() that sees the count sees the
        // push it counts as at least claimed (see Pool::wait_idle).
        local_pushes_.store(
                local_pushes_.load(std::memory_order_relaxed) + 1,
                std::memory_order_release);
        if (!deque_.push(task)) {
            try {
                push_overflow(task, false);
            } catch (...) {
                // Not queued after all (out of memory): not counted either.
                local_pushes_.store(
                        local_pushes_.load(std::memory_order_relaxed) - 1,
                        std::memory_order_release);
                throw;
            }
        }
    }

    /// push_external: any thread.
    void push_external(TaskNode* task) {
        if (!ring_.push(task)) {
            push_overflow(task, true);
        }
    }

    /// pop_local: owner only. Own deque first (LIFO), then the ring, then the
    /// overflow.
    TaskNode* pop_local() {
        if (TaskNode* t = deque_.pop()) {
            return t;
        }
        if (TaskNode* t = ring_.pop()) {
            return t;
        }
        return pop_overflow();
    }

    /// steal: any thread. Oldest owner task first, then the ring, then the
    /// overflow.
    TaskNode* steal() {
        if (TaskNode* t = deque_.steal()) {
            return t;
        }
        if (TaskNode* t = ring_.pop()) {
            return t;
        }
        return pop_overflow();
    }

    /// size_estimate: any thread; a possibly stale count of queued tasks.
    int64_t size_estimate() const {
        return deque_.size_estimate() + ring_.size_estimate() +
                overflow_size_.load(std::memory_order_relaxed);
    }

    /// pushes_total: any thread; tasks ever pushed (monotone). A push counts
    /// before its task can be popped.
    uint64_t pushes_total() const {
        return local_pushes_.load(std::memory_order_acquire) +
                ring_.pushes_claimed() +
                overflow_external_pushes_.load(std::memory_order_acquire);
    }

    /// overflow_pushes: any thread; how often a full ring or deque sent a
    /// task to the overflow list.
    uint64_t overflow_pushes() const {
        return overflow_pushes_.load(std::memory_order_relaxed);
    }

   private:
    /// push_overflow: `external` says whether pushes_total() must count the
    /// task here (push_local() counted its own already).
    void push_overflow(TaskNode* task, bool external) {
        std::lock_guard<std::mutex> lock(overflow_mutex_);
        overflow_.push_back(task);
        overflow_pushes_.fetch_add(1, std::memory_order_relaxed);
        // release (under the mutex too): lock-free readers of the size see
        // the task's list entry; pops take the mutex anyway.
        overflow_size_.store(
                int64_t(overflow_.size()),
                std::memory_order_release);
        if (external) {
            overflow_external_pushes_.fetch_add(1, std::memory_order_release);
        }
    }

    TaskNode* pop_overflow() {
        // Lock-free fast path: an empty overflow costs one load.
        if (overflow_size_.load(std::memory_order_acquire) == 0) {
            return nullptr;
        }
        std::lock_guard<std::mutex> lock(overflow_mutex_);
        if (overflow_.empty()) {
            return nullptr;
        }
        TaskNode* task = overflow_.front();
        overflow_.pop_front();
        overflow_size_.store(
                int64_t(overflow_.size()),
                std::memory_order_release);
        return task;
    }

    WorkStealingDeque deque_;
    SubmitRing ring_;

    alignas(64) std::atomic<uint64_t> local_pushes_{0};

    alignas(64) std::mutex overflow_mutex_;
    std::deque<TaskNode*> overflow_;
    std::atomic<int64_t> overflow_size_{0};
    std::atomic<uint64_t> overflow_pushes_{0};
    std::atomic<uint64_t> overflow_external_pushes_{0};
};

} // namespace ccd
} // namespace faiss
