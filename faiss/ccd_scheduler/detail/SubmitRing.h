/**
 * SubmitRing: a bounded ring of tasks that any thread may push into and any
 * thread may pop from (the owner pops, thieves steal; both use pop()).
 *
 * Algorithm: Dmitry Vyukov's bounded MPMC queue (per-cell sequence numbers,
 * one CAS per operation on a shared index). Departures: none in the
 * algorithm; the ring stores TaskNode pointers only.
 *
 * Caveat, kept on purpose: the ring is not lock-free in the strict sense. A
 * producer preempted between claiming a cell and publishing it makes pop()
 * report "empty" for that cell (and the cells after it) until it resumes.
 * No wake-up is lost because of it: Pool::submit checks for parked workers
 * only after push() has published the cell.
 *
 * Thread contract: push(), pop(), size_estimate() and pushes_claimed() from
 * any thread.
 *
 * Invariant: cell i holds a published task exactly when seq == pos + 1 for
 * the position pos it was claimed at, and is free for position pos when
 * seq == pos; every position is claimed by exactly one push and consumed by
 * exactly one pop (the CAS on tail_/head_ decides who).
 */

#pragma once

#include <faiss/ccd_scheduler/Task.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace faiss {
namespace ccd {

class SubmitRing {
   public:
    explicit SubmitRing(uint32_t capacity = 1024)
            : mask_(checked_capacity(capacity) - 1),
              cells_(new Cell[capacity]) {
        for (uint32_t i = 0; i < capacity; i++) {
            cells_[i].seq.store(i, std::memory_order_relaxed);
        }
    }

    SubmitRing(const SubmitRing&) = delete;
    SubmitRing& operator=(const SubmitRing&) = delete;

    /// push: any thread. False when full (the task was not taken).
    bool push(TaskNode* task) {
        uint64_t pos = tail_.load(std::memory_order_relaxed);
        for (;;) {
            Cell& cell = cells_[pos & mask_];
            // acquire: pairs with the release in pop(), so the consumer is
            // done with the cell before we reuse it.
            uint64_t seq = cell.seq.load(std::memory_order_acquire);
            int64_t dif = int64_t(seq) - int64_t(pos);
            if (dif == 0) {
                // relaxed: the cell's seq, not tail_, carries the data.
                if (tail_.compare_exchange_weak(
                            pos,
                            pos + 1,
                            std::memory_order_relaxed)) {
                    cell.task = task;
                    // release: publishes the task pointer and its contents.
                    cell.seq.store(pos + 1, std::memory_order_release);
                    return true;
                }
            } else if (dif < 0) {
                return false; // full
            } else {
                pos = tail_.load(std::memory_order_relaxed);
            }
        }
    }

    /// pop: any thread. The oldest published task, or nullptr.
    TaskNode* pop() {
        uint64_t pos = head_.load(std::memory_order_relaxed);
        for (;;) {
            Cell& cell = cells_[pos & mask_];
            // acquire: pairs with push()'s release; we see the task.
            uint64_t seq = cell.seq.load(std::memory_order_acquire);
            int64_t dif = int64_t(seq) - int64_t(pos + 1);
            if (dif == 0) {
                if (head_.compare_exchange_weak(
                            pos,
                            pos + 1,
                            std::memory_order_relaxed)) {
                    TaskNode* task = cell.task;
                    // release: hands the cell back to the producers.
                    cell.seq.store(pos + mask_ + 1, std::memory_order_release);
                    return task;
                }
            } else if (dif < 0) {
                return nullptr; // empty (or next cell not yet published)
            } else {
                pos = head_.load(std::memory_order_relaxed);
            }
        }
    }

    /// size_estimate: any thread; a snapshot that may be stale.
    int64_t size_estimate() const {
        uint64_t h = head_.load(std::memory_order_relaxed);
        uint64_t t = tail_.load(std::memory_order_relaxed);
        return t > h ? int64_t(t - h) : 0;
    }

    /// pushes_claimed: any thread; positions ever claimed by push(). Counts a
    /// push as soon as it claims its cell, before it publishes.
    uint64_t pushes_claimed() const {
        return tail_.load(std::memory_order_acquire);
    }

   private:
    /// checked_capacity: validates before anything is allocated.
    static uint32_t checked_capacity(uint32_t capacity) {
        if (capacity < 2 || (capacity & (capacity - 1)) != 0) {
            throw std::invalid_argument(
                    "SubmitRing capacity must be a power of two >= 2");
        }
        return capacity;
    }

    struct Cell {
        std::atomic<uint64_t> seq;
        TaskNode* task = nullptr;
    };

    // Producers contend on tail_, consumers on head_: separate lines.
    alignas(64) std::atomic<uint64_t> tail_{0};
    alignas(64) std::atomic<uint64_t> head_{0};
    alignas(64) const uint64_t mask_;
    std::unique_ptr<Cell[]> cells_;
};

} // namespace ccd
} // namespace faiss
