/**
 * FifoGate: at most `slots` threads inside at once, let in in the order
 * they arrived (a ticket lock with several holders). Pure mechanism; the
 * pool puts its callers through one (Pool::CallerScope), so that many
 * concurrent searches run first come, first served instead of sharing
 * the cores (processor sharing makes every one of them finish late).
 *
 * Tickets: enter() takes ticket t = next_++; `left_` counts the holders
 * that left. Ticket t is inside once t - left_ < slots (tickets
 * and counts wrap together; the difference is read as signed, since
 * left_ can pass an admitted ticket whose thread has not looked yet).
 * leave() moves left_ by one, which admits exactly ticket
 * left_ + slots - 1.
 *
 * Sleeping (no lost wake-up). A waiter:
 *   E1  sleepers_ += 1                 seq_cst RMW
 *   E2  l = left_; admitted ? go       seq_cst load
 *   E3  futex_wait_bitset(left_, l, bit(t))
 * A leaver:
 *   L1  left_ += 1 (now l')            seq_cst RMW
 *   L2  sleepers_ > 0 ? futex_wake_bitset(left_, bit(l' + slots - 1))
 * Either E1 precedes L2 (the leaver wakes the admitted ticket's bit) or L1
 * precedes E2 (the waiter sees itself admitted); and E3 returns at once if
 * left_ moved after E2. bit(t) = 1 << (t % 32): waiters 32 tickets apart
 * share a bit and wake spuriously, then sleep again.
 *
 * Thread contract: enter() then leave() by the same thread, any number of
 * threads; a thread inside must not enter() again (it would wait for
 * itself once the gate is full).
 */

#pragma once

#include <faiss/ccd_scheduler/detail/Futex.h>

#include <atomic>
#include <cstdint>

namespace faiss {
namespace ccd {
namespace detail {

class FifoGate {
   public:
    explicit FifoGate(uint32_t slots) : slots_(slots == 0 ? 1 : slots) {}

    FifoGate(const FifoGate&) = delete;
    FifoGate& operator=(const FifoGate&) = delete;

    void enter() {
        // relaxed: the ticket orders nothing by itself; admission is
        // decided by loads of left_.
        const uint32_t t = next_.fetch_add(1, std::memory_order_relaxed);
        for (int i = 0; i < kSpins; i++) {
            if (admitted(t, left_.load(std::memory_order_acquire))) {
                return;
            }
            cpu_relax();
        }
        for (;;) {
            sleepers_.fetch_add(1, std::memory_order_seq_cst);        // E1
            const uint32_t l = left_.load(std::memory_order_seq_cst); // E2
            if (admitted(t, l)) {
                sleepers_.fetch_sub(1, std::memory_order_relaxed);
                return;
            }
            futex_wait_bitset(&left_, l, bit(t)); // E3
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
    }

    void leave() {
        const uint32_t l = left_.fetch_add(1, std::memory_order_seq_cst) + 1;
        if (sleepers_.load(std::memory_order_seq_cst) > 0) { // L2
            futex_wake_bitset(&left_, bit(l + slots_ - 1));
        }
    }

    uint32_t slots() const {
        return slots_;
    }

    /// waiting: threads that took a ticket and are not inside yet (an
    /// estimate while others move).
    uint32_t waiting() const {
        const uint32_t issued = next_.load(std::memory_order_relaxed);
        const uint32_t left = left_.load(std::memory_order_relaxed);
        const uint32_t in_or_waiting = issued - left;
        return in_or_waiting > slots_ ? in_or_waiting - slots_ : 0;
    }

   private:
    // Polls before sleeping: a holder often leaves within microseconds.
    static constexpr int kSpins = 200;

    /// admitted: signed, because left_ may pass a ticket before its holder
    /// looks: leaves come in any order, and a holder admitted while asleep
    /// can be overtaken by later tickets that enter and leave first.
    bool admitted(uint32_t ticket, uint32_t left) const {
        return int32_t(ticket - left) < int32_t(slots_);
    }
    static uint32_t bit(uint32_t ticket) {
        return 1u << (ticket % 32);
    }

    const uint32_t slots_;
    alignas(64) std::atomic<uint32_t> next_{0};
    // The futex word: every leave() writes it, every waiter reads it.
    alignas(64) std::atomic<uint32_t> left_{0};
    std::atomic<uint32_t> sleepers_{0};
};

} // namespace detail
} // namespace ccd
} // namespace faiss
