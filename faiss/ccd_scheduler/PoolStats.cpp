#include <faiss/ccd_scheduler/PoolStats.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace faiss {
namespace ccd {

namespace {

template <class Field>
uint64_t sum_of(const std::vector<WorkerStats>& workers, Field field) {
    uint64_t total = 0;
    for (const WorkerStats& w : workers) {
        total += w.*field;
    }
    return total;
}

} // namespace

uint64_t PoolStats::tasks_run() const {
    return sum_of(workers, &WorkerStats::tasks_run);
}
uint64_t PoolStats::local_pops() const {
    return sum_of(workers, &WorkerStats::local_pops);
}
uint64_t PoolStats::intra_ccd_steals() const {
    return sum_of(workers, &WorkerStats::intra_ccd_steals);
}
uint64_t PoolStats::cross_ccd_steals() const {
    return sum_of(workers, &WorkerStats::cross_ccd_steals);
}
uint64_t PoolStats::parks() const {
    return sum_of(workers, &WorkerStats::parks);
}

std::vector<uint64_t> PoolStats::tasks_run_per_ccd() const {
    std::vector<uint64_t> per_ccd;
    for (const WorkerStats& w : workers) {
        if (size_t(w.ccd) >= per_ccd.size()) {
            per_ccd.resize(w.ccd + 1, 0);
        }
        per_ccd[w.ccd] += w.tasks_run;
    }
    return per_ccd;
}

double PoolStats::cross_ccd_steal_ratio() const {
    uint64_t cross = cross_ccd_steals();
    uint64_t all = cross + intra_ccd_steals();
    return all == 0 ? 0.0 : double(cross) / double(all);
}

PoolStats PoolStats::since(const PoolStats& earlier) const {
    if (earlier.workers.size() != workers.size()) {
        throw std::invalid_argument(
                "PoolStats::since: snapshots of different pools");
    }
    PoolStats d = *this;
    d.callers -= earlier.callers;
    for (size_t i = 0; i < workers.size(); i++) {
        const WorkerStats& e = earlier.workers[i];
        WorkerStats& w = d.workers[i];
        w.tasks_run -= e.tasks_run;
        w.local_pops -= e.local_pops;
        w.intra_ccd_steals -= e.intra_ccd_steals;
        w.cross_ccd_steals -= e.cross_ccd_steals;
        w.parks -= e.parks;
        w.uncaught_exceptions -= e.uncaught_exceptions;
    }
    return d;
}

std::string PoolStats::to_string() const {
    char buf[256];
    snprintf(
            buf,
            sizeof(buf),
            "tasks=%llu local=%llu intra_steals=%llu cross_steals=%llu "
            "(cross ratio %.1f%%) parks=%llu",
            (unsigned long long)tasks_run(),
            (unsigned long long)local_pops(),
            (unsigned long long)intra_ccd_steals(),
            (unsigned long long)cross_ccd_steals(),
            100.0 * cross_ccd_steal_ratio(),
            (unsigned long long)parks());
    return buf;
}

} // namespace ccd
} // namespace faiss
