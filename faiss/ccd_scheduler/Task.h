/**
 * Task: one unit of work in the pool, as the queues hold it.
 *
 * A task is a heap node holding the callable, its MappingId and, optionally,
 * a TaskCompletion to tell when it is done. Queues move raw TaskNode
 * pointers; the node is owned by whichever queue holds it, then by the
 * thread that popped it, which runs and deletes it exactly once
 * (Pool::run_task).
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <new>
#include <utility>

namespace faiss {
namespace ccd {

namespace detail {
// TaskAllocator (detail/TaskAllocator.h): per-thread block caches.
void* allocate_task(std::size_t size);
void deallocate_task(void* p, std::size_t size) noexcept;
} // namespace detail

/**
 * TaskCompletion: told what became of each task it is attached to. The pool
 * calls, for every such task, in this order and from the thread that runs
 * it: should_run() once; if true, the callable, then task_threw() if it
 * threw; then task_done(), after the task node (with the callable and its
 * captures) is destroyed. task_done() is the pool's last access to the
 * completion: the object may be destroyed by another thread as soon as
 * task_done() lets it see the task as finished. TaskGroup is the library's
 * completion; others (a batch of asynchronous queries, say) may implement their
 * own.
 */
class TaskCompletion {
   public:
    /// should_run: false skips the task (its callable is destroyed unrun).
    virtual bool should_run() noexcept {
        return true;
    }
    /// task_threw: the task threw `error`.
    virtual void task_threw(std::exception_ptr error) noexcept = 0;
    /// task_done: the task finished, or was skipped.
    virtual void task_done() noexcept = 0;

   protected:
    ~TaskCompletion() = default;
};

/**
 * FirstError: the first of the exceptions many tasks may throw, for a
 * completion to report. Thread contract: keep() and failed() from any
 * thread; take() once every task has finished.
 */
class FirstError {
   public:
    /// keep: remember `error` unless an earlier one is kept.
    void keep(std::exception_ptr error) noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) {
            error_ = std::move(error);
        }
        // release: a thread that sees failed() sees error_ set too.
        failed_.store(true, std::memory_order_release);
    }
    bool failed() const {
        return failed_.load(std::memory_order_acquire);
    }
    /// take: the kept exception (null if none), and forget it.
    std::exception_ptr take() noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        failed_.store(false, std::memory_order_relaxed);
        return std::exchange(error_, nullptr);
    }

   private:
    std::atomic<bool> failed_{false};
    std::mutex mutex_;
    std::exception_ptr error_; ///< guarded by mutex_
};

struct TaskNode {
    MappingId id;
    TaskCompletion* completion; ///< nullptr: exceptions are only counted

    TaskNode(MappingId id_in, TaskCompletion* completion_in)
            : id(id_in), completion(completion_in) {}
    virtual ~TaskNode() = default;
    virtual void run() = 0;

    // Task nodes come from TaskAllocator's per-thread caches: the client
    // that allocates a node is rarely the worker that frees it. The
    // virtual destructor makes `delete node` pass the derived size.
    static void* operator new(std::size_t size) {
        return detail::allocate_task(size);
    }
    static void operator delete(void* p, std::size_t size) noexcept {
        detail::deallocate_task(p, size);
    }
    // Over-aligned callables bypass the caches (blocks are 16-aligned).
    static void* operator new(std::size_t size, std::align_val_t align) {
        return ::operator new(size, align);
    }
    static void operator delete(
            void* p,
            std::size_t size,
            std::align_val_t align) noexcept {
        ::operator delete(p, size, align);
    }
};

/// TaskOf: a TaskNode around any callable taking no argument.
template <class F>
struct TaskOf final : TaskNode {
    F fn;
    TaskOf(MappingId id_in, TaskCompletion* completion_in, F&& f)
            : TaskNode(id_in, completion_in), fn(std::move(f)) {}
    TaskOf(MappingId id_in, TaskCompletion* completion_in, const F& f)
            : TaskNode(id_in, completion_in), fn(f) {}
    void run() override {
        fn();
    }
};

} // namespace ccd
} // namespace faiss
