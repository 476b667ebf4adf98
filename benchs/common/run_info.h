/**
 * run_info.h: what every benchmark's results file records about the run
 * itself: the command line, the date, the git commit of the source tree and
 * the machine's load average. Header-only, shared by all benchs/.
 */

#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#ifndef BENCH_SOURCE_DIR
#define BENCH_SOURCE_DIR "."
#endif

namespace bench {

/// shell_quote: an argument as a shell would need it to reproduce the run.
inline std::string shell_quote(const std::string& arg) {
    if (!arg.empty() &&
        arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                              "TUVWXYZ0123456789-_./=:,+") ==
                std::string::npos) {
        return arg;
    }
    std::string q = "'";
    for (char c : arg) {
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return q + "'";
}

/// shell_output: stdout of a command, trailing blanks removed.
inline std::string shell_output(const std::string& cmd) {
    std::string out;
    if (FILE* f = popen(cmd.c_str(), "r")) {
        char buf[256];
        while (fgets(buf, sizeof(buf), f)) {
            out += buf;
        }
        pclose(f);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
        out.pop_back();
    }
    return out;
}

/// git_commit: short hash of the source tree, "-dirty" when it has
/// uncommitted changes, "unknown" outside a git checkout with a commit.
inline std::string git_commit() {
    const std::string git = std::string("git -C '") + BENCH_SOURCE_DIR + "' ";
    std::string hash = shell_output(git + "rev-parse --short HEAD 2>/dev/null");
    if (hash.empty()) {
        return "unknown";
    }
    if (!shell_output(git + "status --porcelain 2>/dev/null").empty()) {
        hash += "-dirty";
    }
    return hash;
}

inline std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm;
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/// loadavg: the machine's 1-minute load average, -1 where unknown.
inline double loadavg() {
    double load = -1;
    if (FILE* f = fopen("/proc/loadavg", "r")) {
        if (fscanf(f, "%lf", &load) != 1) {
            load = -1;
        }
        fclose(f);
    }
    return load;
}

inline double now_s() {
    return std::chrono::duration<double>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

inline double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// percentile: nearest rank, p in (0, 1]; `sorted` ascending, not empty.
inline double percentile(const std::vector<double>& sorted, double p) {
    size_t rank = size_t(p * double(sorted.size()) + 0.999999);
    rank = std::min(std::max(rank, size_t(1)), sorted.size());
    return sorted[rank - 1];
}

} // namespace bench
