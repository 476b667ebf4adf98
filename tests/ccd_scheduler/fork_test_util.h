/**
 * fork_test_util.h: what the fork() tests share (test_Fork.cpp, and
 * test_Faults.cpp of the glue): whether TSan runs them (it does not
 * support fork() with threads running), and running a body in a child
 * with a deadline.
 */

#pragma once

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace fork_test {

#if defined(__SANITIZE_THREAD__)
constexpr bool kUnderTsan = true;
#else
constexpr bool kUnderTsan = false;
#endif

/// run_in_child: fork, run `body` in the child (its return value is the
/// exit status), and return the child's status, or -1 if it did not end
/// within `timeout_s` (then it is killed).
template <class Body>
int run_in_child(Body body, int timeout_s = 60) {
    const pid_t pid = fork();
    if (pid == 0) {
        _exit(body());
    }
    EXPECT_GT(pid, 0);
    const auto until =
            std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

} // namespace fork_test
