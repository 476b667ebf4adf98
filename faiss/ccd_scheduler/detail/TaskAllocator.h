/**
 * TaskAllocator: memory for TaskNodes, recycled per thread.
 *
 * The pool's common pattern defeats malloc's per-thread caches: a client
 * thread allocates every task node and a worker frees it, so each side
 * keeps going to the shared arena (for tiny tasks, malloc/free and the
 * arena lock were most of the time a profile showed). Here every thread owns a
 * cache of fixed-size blocks per size class; a block remembers its owner;
 * the owner frees into its own list, anyone else pushes the block onto the
 * owner's remote-return stack (one CAS), and the owner takes that whole
 * stack back with one exchange when its own list runs dry.
 *
 * Invariants, enforced in TaskAllocator.cpp:
 *  - A block is in at most one list at a time, and only its owner cache
 *    pops its lists; remote threads only push. The return stack is popped
 *    by exchange(nullptr) of the whole stack, so Treiber's ABA cannot arise.
 *  - Caches are never freed: a thread that exits hands its cache to the
 *    next thread that needs one (blocks returned to it meanwhile wait on
 *    its stack), so a block's owner pointer stays valid forever.
 *  - Own free lists hold at most kMaxCached blocks a class, and return
 *    stacks at most kMaxReturned (counted before the push); beyond that
 *    blocks go back to malloc, so a thread keeps a bounded cache however
 *    many of its blocks other threads free.
 *
 * Blocks larger than the biggest class, and every block under
 * AddressSanitizer (so it still sees use-after-free of task nodes), use
 * plain new/delete.
 *
 * Thread contract: allocate_task() and deallocate_task() from any thread.
 */

#pragma once

// allocate_task and deallocate_task are declared in the public Task.h,
// whose TaskNode::operator new and delete call them; this header only
// documents them for the implementation.
#include <faiss/ccd_scheduler/Task.h>
