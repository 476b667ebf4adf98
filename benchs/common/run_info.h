/**
 * run_info.h: what every benchmark's results file records about the run
 * itself (RunInfo: the command line, the date, the git commit of the source
 * tree, the topology, the machine's load average), and small statistics
 * helpers. Header-only, shared by all benchs/.
 */

#pragma once

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#ifndef BENCH_SOURCE_DIR
#define BENCH_SOURCE_DIR "."
#endif

namespace bench {

/// fmt: printf into a std::string (up to 1 KB).
__attribute__((format(printf, 1, 2))) inline std::string fmt(
        const char* format,
        ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(buf, sizeof(buf), format, ap);
    va_end(ap);
    return buf;
}

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
/// uncommitted changes outside benchs/results/ (the benchmarks' own output,
/// written by one benchmark before the next runs), "unknown" outside a git
/// checkout with a commit.
inline std::string git_commit() {
    const std::string git = std::string("git -C '") + BENCH_SOURCE_DIR + "' ";
    std::string hash = shell_output(git + "rev-parse --short HEAD 2>/dev/null");
    if (hash.empty()) {
        return "unknown";
    }
    if (!shell_output(
                 git + "status --porcelain -- . ':!benchs/results' 2>/dev/null")
                 .empty()) {
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

/// median: of the values; `if_empty` when there are none.
inline double median(std::vector<double> v, double if_empty = 0) {
    if (v.empty()) {
        return if_empty;
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// percentile: nearest rank, p in (0, 1]; `sorted` ascending; 0 when
/// empty. The rank rounds up, forgiving p * n a hair above an integer.
template <class T>
double percentile(const std::vector<T>& sorted, double p) {
    if (sorted.empty()) {
        return 0;
    }
    size_t rank = size_t(p * double(sorted.size()) + 0.999999);
    rank = std::min(std::max(rank, size_t(1)), sorted.size());
    return sorted[rank - 1];
}

/// command_line: argv, shell-quoted, so that the run can be repeated.
inline std::string command_line(int argc, char** argv) {
    std::string command;
    for (int i = 0; i < argc; i++) {
        command += (i ? " " : "") + shell_quote(argv[i]);
    }
    return command;
}

// BENCH_FAISS_BUILD: which FAISS a benchmark links (benchs/CMakeLists.txt
// defines it for those that link one).
#ifndef BENCH_FAISS_BUILD
#define BENCH_FAISS_BUILD ""
#endif

/// RunInfo: where, when and how a benchmark ran; the head of every results
/// file (common/report.h writes it). begin() and end() bracket the run.
struct RunInfo {
    std::string command;    ///< command_line(): the run again
    std::string date_utc;   ///< when begin() ran
    std::string git_commit; ///< git_commit() of the source tree
    unsigned hardware_concurrency = 0;
    std::string topology;      ///< the pool's topology, described
    std::string topology_note; ///< how it was found (hwloc, spec, ...)
    bool quick = false;
    /// 1-minute load average before and after the run (-1: unknown): other
    /// work on the machine shows up directly in the numbers.
    double loadavg_before = -1, loadavg_after = -1;
    double seconds = 0; ///< wall time from begin() to end()
    std::string faiss_build = BENCH_FAISS_BUILD; ///< "" if it links none

    void begin(std::string command_in, bool quick_in) {
        command = std::move(command_in);
        quick = quick_in;
        date_utc = utc_now();
        git_commit = ::bench::git_commit();
        hardware_concurrency =
                std::max(1u, std::thread::hardware_concurrency());
        loadavg_before = loadavg();
        start_s_ = now_s();
    }

    void end() {
        loadavg_after = loadavg();
        seconds = now_s() - start_s_;
    }

   private:
    double start_s_ = 0;
};

} // namespace bench
