/**
 * HeldAcrossForks: process-lifetime mutexes that fork() takes first.
 *
 * fork() copies memory but only the forking thread. A mutex another
 * thread holds at that moment stays held in the child, by nobody, and the
 * child's first lock of it waits forever: CI saw a child of
 * Faults.ForkWhileSearching hang on the search statistics' lock, held by
 * a parent's search. hold_across_forks(m) registers `m` with
 * pthread_atfork: the prepare handler locks it, and the parent's and the
 * child's handlers unlock it, so the child starts with `m` free and the
 * data it guards as its last holder left it.
 *
 * For mutexes that live as long as the process and guard short sections,
 * none held while another registered one is taken: the prepare handler
 * takes them one after another, so a thread holding one while waiting for
 * the next would deadlock fork(). Objects that own threads rebuild what
 * the parent's threads held in other ways (detail/ForkGeneration.h).
 *
 * Thread contract: any thread. A mutex registered while another thread
 * forks may or may not be taken by that fork.
 */

#pragma once

#include <mutex>

namespace faiss {
namespace ccd {

/// kMaxHeldAcrossForks: how many mutexes hold_across_forks takes.
constexpr int kMaxHeldAcrossForks = 8;

/// hold_across_forks: make every later fork() lock `m` before it copies
/// the process and unlock it in both processes after. More than
/// kMaxHeldAcrossForks mutexes: std::logic_error.
void hold_across_forks(std::mutex& m);

} // namespace ccd
} // namespace faiss
