/**
 * fork_test_util.h: what the fork() tests share (test_Fork.cpp, and
 * test_Faults.cpp of the glue): whether TSan runs them (it does not
 * support fork() with threads running), and running a body in a child
 * with a deadline.
 */

#pragma once

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace fork_test {

#if defined(__SANITIZE_THREAD__)
constexpr bool kUnderTsan = true;
#else
constexpr bool kUnderTsan = false;
#endif

// kUnderAsan: GCC 12's AddressSanitizer does not take its allocator's
// locks around fork() (glibc's malloc does; LLVM's sanitizers added it
// later), so a child forked while another thread is inside malloc hangs
// in its first allocation. Seen in CI: Faults.ForkWhileSearching's child
// waited forever in asan_memalign. Tests that fork while other threads
// allocate skip under ASan; the release build runs them.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif

/// dump_stacks: print every thread's stack of a hung child to stderr, so
/// that a hang in CI says where it is (when gdb is installed).
inline void dump_stacks(pid_t pid) {
    const std::string cmd = "command -v gdb >/dev/null && gdb -batch -nx -p " +
            std::to_string(pid) +
            " -ex 'thread apply all bt 30' 1>&2 2>/dev/null";
    fprintf(stderr, "child %d hung; its threads:\n", int(pid));
    if (std::system(cmd.c_str()) != 0) {
        fprintf(stderr, "(no stacks: gdb missing or not permitted)\n");
    }
}

/// run_in_child: fork, run `body` in the child (its return value is the
/// exit status), and return the child's status, or -1 if it did not end
/// within `timeout_s` (then its stacks are printed, if `dump`, and it is
/// killed).
template <class Body>
int run_in_child(Body body, int timeout_s = 60, bool dump = true) {
    const pid_t pid = fork();
    if (pid == 0) {
#ifdef PR_SET_PTRACER
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY); // lets dump_stacks attach
#endif
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
    if (dump) {
        dump_stacks(pid);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

} // namespace fork_test
