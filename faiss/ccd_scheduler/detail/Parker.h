/**
 * Parker: one worker's sleep slot. Pure mechanism; the protocol that makes
 * it safe against lost wake-ups lives in Pool (see "Parking protocol" in
 * Pool.h), which is the only user.
 *
 * States of `word_`: kAwake (0) or kParked (1).
 *  - The owner announces with prepare(), re-checks for work, then either
 *    cancel()s or wait()s. An untimed wait() returns only once someone has
 *    unpark()ed it.
 *  - unpark() flips kParked -> kAwake with one exchange; exactly one of
 *    several concurrent unparkers sees kParked and issues the futex wake.
 *
 * Thread contract: prepare(), cancel(), wait() by the owner only;
 * is_parked() and unpark() by any thread.
 */

#pragma once

#include <faiss/ccd_scheduler/detail/Futex.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace faiss {
namespace ccd {

class Parker {
   public:
    static constexpr uint32_t kAwake = 0;
    static constexpr uint32_t kParked = 1;

    /// prepare: owner only. Seq_cst so that it takes part in the Dekker
    /// pairing of the parking protocol (the owner's re-check follows it).
    void prepare() {
        word_.store(kParked, std::memory_order_seq_cst);
    }

    /// cancel: owner only, after prepare() found work on its re-check.
    /// relaxed: nothing is published by waking up; an unparker racing with
    /// us at worst issues a futex wake nobody needs.
    void cancel() {
        word_.store(kAwake, std::memory_order_relaxed);
    }

    /// wait: owner only, after prepare(). Sleeps until unpark(), or until
    /// timeout_ns has passed (timeout_ns < 0: no time limit). Returns true
    /// if woken by unpark(), false if the time ran out. Early returns of the
    /// futex (a signal; a late wake meant for an earlier park) are absorbed
    /// by re-checking the word and sleeping for what is left.
    bool wait(int64_t timeout_ns = -1) {
        const auto deadline = std::chrono::steady_clock::now() +
                std::chrono::nanoseconds(timeout_ns < 0 ? 0 : timeout_ns);
        // acquire: pairs with unpark()'s exchange, so what the unparker
        // wrote before waking us (a pushed task, the stop flag) is visible.
        while (word_.load(std::memory_order_acquire) == kParked) {
            int64_t left_ns = -1;
            if (timeout_ns >= 0) {
                left_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  deadline - std::chrono::steady_clock::now())
                                  .count();
                if (left_ns <= 0) {
                    // Time is up: un-park ourselves, unless a concurrent
                    // unpark() wins the exchange and owns the wake.
                    uint32_t expected = kParked;
                    return !word_.compare_exchange_strong(
                            expected,
                            kAwake,
                            std::memory_order_acq_rel);
                }
            }
            detail::futex_wait(&word_, kParked, left_ns);
        }
        return true;
    }

    /// is_parked: any thread. seq_cst: the submitter's half of the Dekker
    /// pairing (it follows a seq_cst fence after the push).
    bool is_parked() const {
        return word_.load(std::memory_order_seq_cst) == kParked;
    }

    /// unpark: any thread. True if this call woke the owner.
    bool unpark() {
        // A load first keeps the common "already awake" case from writing
        // the cache line. seq_cst: it is the waker's half of the Dekker
        // pairing when called without is_parked() (Pool's stop path).
        if (word_.load(std::memory_order_seq_cst) != kParked) {
            return false;
        }
        // acq_rel: release publishes our writes to the woken owner.
        if (word_.exchange(kAwake, std::memory_order_acq_rel) != kParked) {
            return false;
        }
        detail::futex_wake(&word_, 1);
        return true;
    }

   private:
    // Its own cache line: submitters read it on every submit.
    alignas(64) std::atomic<uint32_t> word_{kAwake};
};

} // namespace ccd
} // namespace faiss
