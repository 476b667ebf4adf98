/**
 * Futex: the two Linux futex calls the pool sleeps and wakes with.
 *
 * Private futexes (FUTEX_PRIVATE_FLAG): the kernel keys them by address in
 * this process and never reads the word on a wake, so futex_wake on a word
 * whose owner was just destroyed is harmless (at worst a spurious wake-up).
 * TaskGroup relies on that; see TaskGroup.h.
 */

#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <ctime>

namespace faiss {
namespace ccd {
namespace detail {

static_assert(
        sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
        "futex words must be plain 32-bit words");

/// futex_wait: sleep while *word == expected, up to timeout_ns (< 0: none).
/// Returns at once if the word differs; may return spuriously.
inline void futex_wait(
        std::atomic<uint32_t>* word,
        uint32_t expected,
        int64_t timeout_ns = -1) {
    timespec ts;
    timespec* tsp = nullptr;
    if (timeout_ns >= 0) {
        ts.tv_sec = time_t(timeout_ns / 1000000000);
        ts.tv_nsec = long(timeout_ns % 1000000000);
        tsp = &ts;
    }
    syscall(SYS_futex,
            reinterpret_cast<uint32_t*>(word),
            FUTEX_WAIT_PRIVATE,
            expected,
            tsp,
            nullptr,
            0);
}

/// futex_wake: wake up to `count` threads sleeping on `word`.
inline void futex_wake(std::atomic<uint32_t>* word, int count = INT_MAX) {
    syscall(SYS_futex,
            reinterpret_cast<uint32_t*>(word),
            FUTEX_WAKE_PRIVATE,
            count,
            nullptr,
            nullptr,
            0);
}

/// futex_wait_bitset: futex_wait that only wakes with a futex_wake_bitset
/// whose mask shares a bit with `mask` (untimed).
inline void futex_wait_bitset(
        std::atomic<uint32_t>* word,
        uint32_t expected,
        uint32_t mask) {
    syscall(SYS_futex,
            reinterpret_cast<uint32_t*>(word),
            FUTEX_WAIT_BITSET_PRIVATE,
            expected,
            nullptr,
            nullptr,
            mask);
}

/// futex_wake_bitset: wake the sleepers on `word` whose mask meets `mask`.
inline void futex_wake_bitset(std::atomic<uint32_t>* word, uint32_t mask) {
    syscall(SYS_futex,
            reinterpret_cast<uint32_t*>(word),
            FUTEX_WAKE_BITSET_PRIVATE,
            INT_MAX,
            nullptr,
            nullptr,
            mask);
}

/// cpu_relax: a spin-wait hint to the core (PAUSE on x86).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

} // namespace detail
} // namespace ccd
} // namespace faiss
