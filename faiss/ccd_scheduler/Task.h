/**
 * Task: one unit of work in the pool, as the queues hold it.
 *
 * A task is a heap node holding the callable, its MappingId and the group it
 * belongs to (or none). Queues move raw TaskNode pointers; the node is owned
 * by whichever queue holds it, then by the worker that popped it, which runs
 * and deletes it exactly once (Pool::run_task).
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>
#include <faiss/ccd_scheduler/TaskAllocator.h>

#include <cstddef>
#include <new>
#include <utility>

namespace faiss {
namespace ccd {

class TaskGroup;

struct TaskNode {
    MappingId id;
    TaskGroup* group; ///< nullptr for a task submitted to the pool directly

    TaskNode(MappingId id_in, TaskGroup* group_in)
            : id(id_in), group(group_in) {}
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
    TaskOf(MappingId id_in, TaskGroup* group_in, F&& f)
            : TaskNode(id_in, group_in), fn(std::move(f)) {}
    TaskOf(MappingId id_in, TaskGroup* group_in, const F& f)
            : TaskNode(id_in, group_in), fn(f) {}
    void run() override {
        fn();
    }
};

} // namespace ccd
} // namespace faiss
