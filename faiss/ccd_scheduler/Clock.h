/**
 * Clock: the one time source of the traffic monitor, injectable so that
 * tests drive windows and re-mapping deterministically.
 *
 * Thread contract: now() from any thread. ManualClock::set/advance from any
 * thread (the value is one atomic).
 */

#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace faiss {
namespace ccd {

class Clock {
   public:
    virtual ~Clock() = default;
    /// now: seconds since an arbitrary, fixed origin; never decreases.
    virtual double now() const = 0;
};

/// SteadyClock: std::chrono::steady_clock.
class SteadyClock final : public Clock {
   public:
    double now() const override {
        return std::chrono::duration<double>(
                       std::chrono::steady_clock::now().time_since_epoch())
                .count();
    }
};

/// steady_now_ns: std::chrono::steady_clock now, in nanoseconds: for
/// durations measured on hot paths (no virtual call, no double).
inline int64_t steady_now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

/// ManualClock: time moves only when a test says so.
class ManualClock final : public Clock {
   public:
    explicit ManualClock(double start = 0) : t_(start) {}
    double now() const override {
        return t_.load(std::memory_order_acquire);
    }
    void set(double t) {
        t_.store(t, std::memory_order_release);
    }
    void advance(double dt) {
        set(now() + dt);
    }

   private:
    std::atomic<double> t_;
};

} // namespace ccd
} // namespace faiss
