#include <faiss/ccd_scheduler/TaskGroup.h>

#include <faiss/ccd_scheduler/detail/Futex.h>

#include <sched.h>

#include <stdexcept>

namespace faiss {
namespace ccd {

namespace {

// Polls before an outsider sleeps: a group of short tasks often finishes
// within a few microseconds, far below the cost of a futex round trip.
constexpr int kOutsiderSpins = 2000;

// A waiting worker that found nothing to help with: pause this many rounds,
// then yield this many, then sleep in short timed naps (tasks may reach its
// queue meanwhile, and nobody would wake it for those).
constexpr int kWorkerPauseRounds = 64;
constexpr int kWorkerYieldRounds = 64;
constexpr int64_t kWorkerNapNs = 50 * 1000;

} // namespace

TaskGroup::~TaskGroup() {
    try {
        wait();
    } catch (...) {
        // Nobody asked for this group's error: dropped, as documented.
    }
}

void TaskGroup::add_pending() {
    // relaxed: the task carrying this count is published by a release push
    // after this line, and its decrement is an RMW on the same word, so the
    // decrement is ordered after the increment.
    uint32_t prev = state_.fetch_add(1, std::memory_order_relaxed);
    if ((prev & kCountMask) >= kCountMask - 1) {
        state_.fetch_sub(1, std::memory_order_relaxed);
        throw std::length_error(
                "TaskGroup: more than 2^31 - 2 unfinished tasks");
    }
}

void TaskGroup::task_threw(std::exception_ptr error) noexcept {
    error_.keep(std::move(error));
}

void TaskGroup::task_done() noexcept {
    // acq_rel: release publishes the task's effects to the waiter, which
    // loads state_ with acquire; acquire orders this after earlier
    // decrements, so the one that reaches zero sees the waiter bit set
    // by any waiter that went to sleep before it.
    std::atomic<uint32_t>* word = &state_;
    uint32_t prev = word->fetch_sub(1, std::memory_order_acq_rel);
    if (prev == (kWaiterBit | 1)) {
        // The group may already be gone: only the address is used.
        detail::futex_wake(word);
    }
}

void TaskGroup::wait() {
    if (pool_.current_worker() >= 0) {
        wait_as_worker();
    } else {
        wait_as_outsider();
    }
    // Nobody sleeps on the word any more: drop a waiter bit we left set.
    state_.fetch_and(kCountMask, std::memory_order_relaxed);
    if (error_.failed()) {
        std::rethrow_exception(error_.take());
    }
}

namespace {

/// sleep_on: set the waiter bit and sleep while the count is unchanged and
/// non-zero. Returns when woken, when the word changed, or after timeout.
void sleep_on(
        std::atomic<uint32_t>& state,
        uint32_t waiter_bit,
        int64_t timeout_ns) {
    uint32_t s = state.load(std::memory_order_acquire);
    while ((s & ~waiter_bit) != 0 && (s & waiter_bit) == 0) {
        // acquire on failure: reload; acq_rel on success: the bit must be in
        // the word's modification order before the final decrement reads
        // it (the fetch_sub in task_done is an RMW on the same word).
        if (state.compare_exchange_weak(
                    s,
                    s | waiter_bit,
                    std::memory_order_acq_rel,
                    std::memory_order_acquire)) {
            s |= waiter_bit;
        }
    }
    if ((s & ~waiter_bit) == 0) {
        return;
    }
    detail::futex_wait(&state, s, timeout_ns);
}

} // namespace

void TaskGroup::wait_as_outsider() {
    for (int i = 0; i < kOutsiderSpins; i++) {
        if (pending() == 0) {
            return;
        }
        detail::cpu_relax();
    }
    while (pending() != 0) {
        sleep_on(state_, kWaiterBit, -1);
    }
}

void TaskGroup::wait_as_worker() {
    int idle = 0;
    while (pending() != 0) {
        if (pool_.help_one()) {
            idle = 0;
            continue;
        }
        idle++;
        if (idle < kWorkerPauseRounds) {
            detail::cpu_relax();
        } else if (idle < kWorkerPauseRounds + kWorkerYieldRounds) {
            sched_yield();
        } else {
            sleep_on(state_, kWaiterBit, kWorkerNapNs);
        }
    }
}

} // namespace ccd
} // namespace faiss
