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
 * The counter moves in a pthread_atfork child handler, registered before
 * the first call returns. Thread contract: any thread.
 */

#pragma once

#include <cstdint>

namespace faiss {
namespace ccd {
namespace detail {

/// fork_generation: 0 in the process that loaded the library, +1 in each
/// fork() child (a child of a child: +2).
uint64_t fork_generation();

} // namespace detail
} // namespace ccd
} // namespace faiss
