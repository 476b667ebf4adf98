/**
 * ForkGeneration: how many times this process is a fork()ed child of a
 * process that had loaded the scheduler. fork() copies the pool's memory
 * but only the forking thread: in the child, every worker, monitor and
 * caller thread of the parent is gone, and whatever they held (a park
 * slot, a gate slot, a lock) stays held. Objects that own threads record
 * the generation they were made in and, seeing a newer one, rebuild their
 * threads in the child instead of waiting for ones that do not exist
 * (Pool::revive_after_fork, Monitor::stop).
 *
 * The counter moves in a pthread_atfork child handler that watch_forks()
 * registers (once, whoever calls it first); objects that own threads call
 * it when they start them. Reading it is one relaxed load: the pool does
 * it on every submit. Thread contract: any thread.
 */

#pragma once

#include <atomic>
#include <cstdint>

namespace faiss {
namespace ccd {
namespace detail {

/// watch_forks: make fork_generation() count forks from now on.
void watch_forks();

/// fork_generation_counter: fork_generation()'s value; only the child
/// handler writes it.
extern std::atomic<uint64_t> fork_generation_counter;

/// fork_generation: 0 in the process that loaded the library, +1 in each
/// fork() child (a child of a child: +2), once watch_forks() was called.
inline uint64_t fork_generation() {
    return fork_generation_counter.load(std::memory_order_relaxed);
}

} // namespace detail
} // namespace ccd
} // namespace faiss
