/**
 * spin_until: the scheduler tests' wait for a condition another thread
 * makes true (a worker parked, a task started), with a time-out so that a
 * bug fails the test instead of hanging it.
 */

#pragma once

#include <chrono>
#include <thread>

/// spin_until: poll a condition for up to `seconds`; false on time-out.
template <class Cond>
bool spin_until(Cond cond, double seconds = 30) {
    auto deadline = std::chrono::steady_clock::now() +
            std::chrono::duration<double>(seconds);
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::yield();
    }
    return true;
}
