#include <faiss/ccd_scheduler/HeldAcrossForks.h>

#include <faiss/ccd_scheduler/detail/ForkGeneration.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>

namespace faiss {
namespace ccd {

namespace {

// The registered mutexes. Slots fill once and are never emptied, so the
// handlers read them without a lock. A slot is claimed by bumping
// `claimed`, then published by storing its pointer (release): a handler
// that sees the pointer sees the mutex constructed, and one that sees a
// claimed slot still null skips it.
std::atomic<std::mutex*> held[kMaxHeldAcrossForks];
std::atomic<int> claimed{0};

/// covered: the slots this thread's fork() covers. fork() runs its three
/// handlers on the forking thread (the child's one thread is its copy),
/// so the prepare handler fixes it and the parent's and the child's
/// unlock exactly what it locked, even if a mutex is registered, or
/// another thread forks, meanwhile.
thread_local int covered = 0;

void lock_all() {
    covered = std::min(
            claimed.load(std::memory_order_acquire),
            kMaxHeldAcrossForks);
    for (int i = 0; i < covered; i++) {
        if (std::mutex* m = held[i].load(std::memory_order_acquire)) {
            m->lock();
        }
    }
}

void unlock_all() {
    for (int i = covered; i-- > 0;) {
        if (std::mutex* m = held[i].load(std::memory_order_acquire)) {
            m->unlock();
        }
    }
}

} // namespace

void hold_across_forks(std::mutex& m) {
    // Every pthread_atfork of the scheduler's is made here, before `m`
    // can be held: glibc before 2.35 keeps its handler list locked while
    // the prepare handlers run, so a thread registering one while holding
    // `m` (a pool made under the default runtime's mutex) would wait for
    // the fork, and the fork for `m`.
    detail::watch_forks();
    static const int registered =
            pthread_atfork(lock_all, unlock_all, unlock_all);
    (void)registered;
    const int slot = claimed.fetch_add(1, std::memory_order_acq_rel);
    if (slot >= kMaxHeldAcrossForks) {
        throw std::logic_error(
                "hold_across_forks: more than kMaxHeldAcrossForks mutexes");
    }
    held[slot].store(&m, std::memory_order_release);
}

} // namespace ccd
} // namespace faiss
