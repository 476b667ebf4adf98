/**
 * ForkSafety: what a fork() child of a process that searched needs in
 * order to search too, in every parallel mode (issue 28, 2).
 *
 * fork() copies the memory of the process but only the forking thread.
 * Two kinds of state a search uses do not survive that on their own:
 *
 *  - Locks another thread holds at the fork. FAISS's
 *    InterruptCallback::lock is taken by searches of every mode
 *    (is_interrupted(), when a callback is installed). It cannot be one
 *    that fork() takes first (HeldAcrossForks.h): its holder runs the
 *    callback under it, and Python's callback waits for the GIL, which
 *    the thread calling os.fork() holds; that fork() waited for ever
 *    (test_fork_matrix.py). The child makes it anew instead: the child's
 *    only thread is not inside it, and what it guards (the callback
 *    pointer) is only read under it, except by set_instance, which a
 *    fork in its midst could catch half-done. The glue's own locks,
 *    held only for short sections that wait for nothing, are taken first
 *    by fork() where they are made.
 *  - libgomp's thread team. The forking thread keeps, in its copied
 *    thread-local state, the pool of OpenMP threads its earlier parallel
 *    regions started; those threads are not in the child, and the child's
 *    next region waits for them forever (parallel_mode 0, 1 and 2, and the
 *    coarse quantizer's loops in every mode). In the child, the forking
 *    thread runs its OpenMP regions on one thread: a team of one never
 *    wakes the pool. Threads the child starts have no such pool and get
 *    OpenMP's usual count. Raising the count again on the forking thread
 *    (omp_set_num_threads) brings the hang back: that is libgomp's, and
 *    exec() ends it.
 *  - libgomp's lock of unnamed critical sections, which parallel_mode 1
 *    and 2 merge their heaps under: a parent's thread inside one at the
 *    fork left it held in the child, whose next such section waited for
 *    ever (test_fork_matrix.py, 1 cell in 5 runs). fork() takes it first
 *    (GOMP_critical_start, libgomp's entry point for `omp critical`) and
 *    both sides release it after; FAISS's sections under it wait for
 *    nothing.
 *
 * The pool of the CCD mode starts its workers again by itself
 * (detail/ForkGeneration.h).
 *
 * Thread contract: make_searches_fork_safe, any thread, any number of
 * times (the first call registers); the child handler runs in the
 * child's only thread, before fork() returns there.
 */

#include <faiss/ForkSafety.h>

#include <faiss/impl/AuxIndexStructures.h>

#include <omp.h>
#include <pthread.h>

#include <mutex>
#include <new>

// libgomp's (and LLVM's libomp's) entry points of an unnamed
// `omp critical` section.
extern "C" void GOMP_critical_start();
extern "C" void GOMP_critical_end();

namespace faiss {
namespace ccd {

namespace {

/// in_the_child: the child handler. omp_set_num_threads writes the calling
/// thread's ICV (allocating it on first use: glibc's fork() leaves malloc
/// usable in the child). std::mutex's constructor only writes the
/// unlocked state; the parent's holder is not in the child.
void in_the_child() {
    GOMP_critical_end();
    new (&InterruptCallback::lock) std::mutex();
    omp_set_num_threads(1);
}

void before_fork() {
    GOMP_critical_start();
}

void in_the_parent() {
    GOMP_critical_end();
}

} // namespace

void make_searches_fork_safe() {
    static const bool registered = [] {
        pthread_atfork(&before_fork, &in_the_parent, &in_the_child);
        return true;
    }();
    (void)registered;
}

} // namespace ccd
} // namespace faiss
