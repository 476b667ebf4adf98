/**
 * TaskGroup: fork-join on a Pool. Submit many tasks, wait() for all.
 *
 *   TaskGroup group(pool);
 *   for (...) group.submit(id, [&] { ... });
 *   group.wait();  // rethrows the first exception a task threw
 *
 * Exceptions: the first exception thrown by a task of the group is kept;
 * tasks of the group that have not started when it is thrown are skipped
 * (their callables are destroyed without running); wait() returns only after
 * every task of the group has finished or been skipped, then rethrows it.
 * The group and the pool stay usable.
 *
 * Waiting on a worker: a worker of the pool that calls wait() runs other
 * tasks while it waits (Pool::help_one), so groups nested in tasks never
 * deadlock, even on a one-worker pool.
 *
 * The group is the TaskCompletion of its tasks (Task.h): should_run() is
 * false once a task threw, task_threw() keeps the first exception,
 * task_done() counts down. It uses only the pool's public interface.
 *
 * Sleeping and waking. `state_` is one 32-bit futex word: the number of
 * unfinished tasks in the low 31 bits, and kWaiterBit, set by a waiter that
 * is about to sleep. The task that takes the count to zero reads the
 * waiter bit in the same fetch_sub and wakes the waiter: there is no window
 * between "count is zero" and "was anyone asleep". That fetch_sub is its
 * last access to the group's memory; the futex_wake after it takes the
 * address only (private futexes never dereference it), so a waiter that
 * sees zero and destroys the group at once is safe.
 *
 * Thread contract: submit() from any thread, including tasks of the group;
 * wait() from one thread at a time. The destructor waits (and drops an
 * exception nobody collected).
 */

#pragma once

#include <faiss/ccd_scheduler/Pool.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <type_traits>
#include <utility>

namespace faiss {
namespace ccd {

// Privately a TaskCompletion: only the group may attach itself to a task
// (a task submitted with it from outside would count down what it never
// counted up).
class TaskGroup final : private TaskCompletion {
   public:
    explicit TaskGroup(Pool& pool) : pool_(pool) {}
    ~TaskGroup();

    TaskGroup(const TaskGroup&) = delete;
    TaskGroup& operator=(const TaskGroup&) = delete;

    /// submit: run f() once on the group's pool, as part of the group. If
    /// the submission itself fails (out of memory, a callable whose copy
    /// throws), it throws and the group does not count the task.
    template <class F>
    void submit(MappingId id, F&& f) {
        add_pending();
        try {
            pool_.submit(
                    id,
                    static_cast<TaskCompletion*>(this),
                    std::forward<F>(f));
        } catch (...) {
            task_done(); // a task that will never run
            throw;
        }
    }

    /// wait: until every task submitted so far has finished; rethrows the
    /// first exception one of them threw.
    void wait();

    /// failed: a task of the group threw and wait() has not reported it yet.
    bool failed() const {
        return error_.failed();
    }

    Pool& pool() const {
        return pool_;
    }

   private:
    // TaskCompletion, called by the pool for each task of the group.
    bool should_run() noexcept override {
        return !failed();
    }
    /// task_threw: keeps the first exception.
    void task_threw(std::exception_ptr error) noexcept override;
    /// task_done: counts the task down; the last access to the group's
    /// memory.
    void task_done() noexcept override;

    static constexpr uint32_t kWaiterBit = 1u << 31;
    static constexpr uint32_t kCountMask = kWaiterBit - 1;

    void add_pending();
    uint32_t pending() const {
        // acquire: pairs with task_done()'s release, so a waiter that sees
        // zero sees every effect of the group's tasks.
        return state_.load(std::memory_order_acquire) & kCountMask;
    }
    void wait_as_worker();
    void wait_as_outsider();

    Pool& pool_;
    // Waiters sleep on it, tasks decrement it: its own line, away from
    // the pool reference that every submit reads.
    alignas(64) std::atomic<uint32_t> state_{0};
    FirstError error_;
};

} // namespace ccd
} // namespace faiss
