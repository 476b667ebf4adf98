#include "ivf_scenarios.h"

#include "common/run_info.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

namespace bench {
namespace ivf {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

/// CpuMeter: this process's CPU time and the machine's busy time, so a run
/// can say how much of the machine others took while it ran.
class CpuMeter {
   public:
    CpuMeter() : own_(own_seconds()), busy_(machine_busy_seconds()) {}

    void finish(double wall_seconds, RunResult* r) const {
        const double cores =
                double(std::max(1u, std::thread::hardware_concurrency()));
        const double capacity = wall_seconds * cores;
        if (capacity <= 0) {
            return;
        }
        const double own = own_seconds() - own_;
        r->own_cpu = own / capacity;
        const double busy = machine_busy_seconds();
        if (busy_ >= 0 && busy >= 0) {
            r->other_cpu = std::max(0.0, (busy - busy_ - own) / capacity);
        }
    }

   private:
    static double own_seconds() {
        rusage u;
        getrusage(RUSAGE_SELF, &u);
        return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
    }
    /// machine_busy_seconds: all CPUs' non-idle time from /proc/stat's
    /// first line (user nice system idle iowait irq softirq steal ...),
    /// steal included (a hypervisor taking our vCPU is noise too).
    static double machine_busy_seconds() {
        FILE* f = fopen("/proc/stat", "r");
        if (f == nullptr) {
            return -1;
        }
        unsigned long long v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        const int got =
                fscanf(f,
                       "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
                       &v[0],
                       &v[1],
                       &v[2],
                       &v[3],
                       &v[4],
                       &v[5],
                       &v[6],
                       &v[7]);
        fclose(f);
        if (got < 4) {
            return -1;
        }
        const double busy = double(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
        return busy / double(sysconf(_SC_CLK_TCK));
    }

    double own_;
    double busy_;
};

faiss::ccd::PoolStats stats_of(const Contender& c) {
    return c.pool() ? c.pool()->stats() : faiss::ccd::PoolStats();
}

void finish(
        const Contender& c,
        const faiss::ccd::PoolStats& before,
        RunResult* r) {
    if (c.pool()) {
        r->has_pool = true;
        r->pool_delta = c.pool()->stats().since(before);
    }
}

} // namespace

Latency summarize(std::vector<double> ms) {
    Latency l;
    l.samples = ms.size();
    if (ms.empty()) {
        return l;
    }
    std::sort(ms.begin(), ms.end());
    l.p50 = percentile(ms, 0.50);
    l.p99 = percentile(ms, 0.99);
    l.p999 = percentile(ms, 0.999);
    l.max = ms.back();
    double sum = 0;
    for (double v : ms) {
        sum += v;
    }
    l.mean = sum / double(ms.size());
    return l;
}

void RunResult::add(const RunResult& block) {
    const double t = seconds + block.seconds;
    auto weighted = [&](double mine, double theirs) {
        if (mine < 0 || theirs < 0) {
            return mine < 0 ? theirs : mine;
        }
        return t > 0 ? (mine * seconds + theirs * block.seconds) / t : mine;
    };
    own_cpu = queries == 0 ? block.own_cpu : weighted(own_cpu, block.own_cpu);
    other_cpu = queries == 0 ? block.other_cpu
                             : weighted(other_cpu, block.other_cpu);
    seconds = t;
    queries += block.queries;
    samples_ms.insert(
            samples_ms.end(),
            block.samples_ms.begin(),
            block.samples_ms.end());
    if (block.has_pool) {
        if (!has_pool) {
            pool_delta = block.pool_delta;
        } else {
            for (size_t i = 0; i < pool_delta.workers.size() &&
                 i < block.pool_delta.workers.size();
                 i++) {
                faiss::ccd::WorkerStats& a = pool_delta.workers[i];
                const faiss::ccd::WorkerStats& b = block.pool_delta.workers[i];
                a.tasks_run += b.tasks_run;
                a.local_pops += b.local_pops;
                a.intra_ccd_steals += b.intra_ccd_steals;
                a.cross_ccd_steals += b.cross_ccd_steals;
                a.parks += b.parks;
                a.uncaught_exceptions += b.uncaught_exceptions;
            }
        }
        has_pool = true;
    }
}

void RunResult::finalize() {
    qps = seconds > 0 ? double(queries) / seconds : 0;
    latency = summarize(samples_ms);
}

RunResult run_single(const Contender& c, const Workload& w, Answers* out) {
    RunResult r;
    r.queries = w.end - w.begin;
    r.samples_ms.resize(r.queries);
    const faiss::ccd::PoolStats before = stats_of(c);
    c.client_init();
    const CpuMeter cpu;
    const Clock::time_point start = Clock::now();
    for (size_t i = w.begin; i < w.end; i++) {
        const Clock::time_point t0 = Clock::now();
        c.search(
                1,
                w.queries + i * w.d,
                w.k,
                out->distances.data() + i * w.k,
                out->labels.data() + i * w.k);
        r.samples_ms[i - w.begin] = ms_between(t0, Clock::now());
    }
    r.seconds = ms_between(start, Clock::now()) / 1000;
    cpu.finish(r.seconds, &r);
    finish(c, before, &r);
    return r;
}

RunResult
run_clients(const Contender& c, const Workload& w, int nclients, Answers* out) {
    RunResult r;
    r.queries = w.end - w.begin;
    r.samples_ms.resize(r.queries);
    std::atomic<size_t> next{w.begin};
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < nclients; t++) {
        threads.emplace_back([&] {
            c.client_init();
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) {
                std::this_thread::yield();
            }
            for (;;) {
                const size_t i = next.fetch_add(1, std::memory_order_relaxed);
                if (i >= w.end) {
                    break;
                }
                const Clock::time_point t0 = Clock::now();
                c.search(
                        1,
                        w.queries + i * w.d,
                        w.k,
                        out->distances.data() + i * w.k,
                        out->labels.data() + i * w.k);
                r.samples_ms[i - w.begin] = ms_between(t0, Clock::now());
            }
        });
    }
    while (ready.load() < nclients) {
        std::this_thread::yield();
    }
    const faiss::ccd::PoolStats before = stats_of(c);
    const CpuMeter cpu;
    const Clock::time_point start = Clock::now();
    go.store(true, std::memory_order_release);
    for (std::thread& t : threads) {
        t.join();
    }
    r.seconds = ms_between(start, Clock::now()) / 1000;
    cpu.finish(r.seconds, &r);
    finish(c, before, &r);
    return r;
}

RunResult run_batch(const Contender& c, const Workload& w, Answers* out) {
    RunResult r;
    r.queries = w.end - w.begin;
    const faiss::ccd::PoolStats before = stats_of(c);
    c.client_init();
    const CpuMeter cpu;
    const Clock::time_point start = Clock::now();
    c.search(
            idx_t(r.queries),
            w.queries + w.begin * w.d,
            w.k,
            out->distances.data() + w.begin * w.k,
            out->labels.data() + w.begin * w.k);
    r.seconds = ms_between(start, Clock::now()) / 1000;
    cpu.finish(r.seconds, &r);
    finish(c, before, &r);
    return r;
}

RunResult
run_batches(const Contender& c, const Workload& w, size_t batch, Answers* out) {
    RunResult r;
    r.queries = w.end - w.begin;
    batch = std::max<size_t>(1, batch);
    const faiss::ccd::PoolStats before = stats_of(c);
    c.client_init();
    const CpuMeter cpu;
    const Clock::time_point start = Clock::now();
    for (size_t i = w.begin; i < w.end; i += batch) {
        const size_t n = std::min(batch, w.end - i);
        const Clock::time_point t0 = Clock::now();
        c.search(
                idx_t(n),
                w.queries + i * w.d,
                w.k,
                out->distances.data() + i * w.k,
                out->labels.data() + i * w.k);
        // Every query of a batch waits for the whole batch.
        r.samples_ms.insert(
                r.samples_ms.end(),
                n,
                ms_between(t0, Clock::now()));
    }
    r.seconds = ms_between(start, Clock::now()) / 1000;
    cpu.finish(r.seconds, &r);
    finish(c, before, &r);
    return r;
}

RunResult run_open_loop(
        const Contender& c,
        const Workload& w,
        double rate,
        int senders,
        uint64_t seed,
        Answers* out) {
    RunResult r;
    r.queries = w.end - w.begin;
    r.samples_ms.resize(r.queries);
    // Arrival i at offsets[i] after the start: exponential gaps.
    std::vector<double> offsets(r.queries);
    std::mt19937_64 rng(seed);
    std::exponential_distribution<double> gap(rate);
    double t = 0;
    for (double& o : offsets) {
        t += gap(rng);
        o = t;
    }
    std::atomic<size_t> next{0};
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    Clock::time_point start;
    std::vector<std::thread> threads;
    for (int s = 0; s < std::max(1, senders); s++) {
        threads.emplace_back([&] {
            c.client_init();
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) {
                std::this_thread::yield();
            }
            for (;;) {
                const size_t j = next.fetch_add(1, std::memory_order_relaxed);
                if (j >= r.queries) {
                    break;
                }
                const Clock::time_point arrival =
                        start +
                        std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(offsets[j]));
                std::this_thread::sleep_until(arrival);
                const size_t i = w.begin + j;
                c.search(
                        1,
                        w.queries + i * w.d,
                        w.k,
                        out->distances.data() + i * w.k,
                        out->labels.data() + i * w.k);
                r.samples_ms[j] = ms_between(arrival, Clock::now());
            }
        });
    }
    while (ready.load() < int(threads.size())) {
        std::this_thread::yield();
    }
    const faiss::ccd::PoolStats before = stats_of(c);
    const CpuMeter cpu;
    start = Clock::now();
    go.store(true, std::memory_order_release);
    for (std::thread& th : threads) {
        th.join();
    }
    r.seconds = ms_between(start, Clock::now()) / 1000;
    cpu.finish(r.seconds, &r);
    finish(c, before, &r);
    return r;
}

void warm_up(const Contender& c, const Workload& w) {
    const size_t n = std::min<size_t>(w.end, 100);
    std::vector<float> dis(n * w.k);
    std::vector<idx_t> ids(n * w.k);
    c.client_init();
    for (size_t i = 0; i < std::min<size_t>(n, 20); i++) {
        c.search(1, w.queries + i * w.d, w.k, dis.data(), ids.data());
    }
    c.search(idx_t(n), w.queries, w.k, dis.data(), ids.data());
}

Mismatch compare_answers(
        const Answers& reference,
        const Answers& answers,
        size_t nq,
        int k) {
    Mismatch m;
    m.compared = nq;
    for (size_t q = 0; q < nq; q++) {
        bool dis_differs = false, ids_differ = false;
        size_t first = 0;
        for (int j = 0; j < k; j++) {
            const size_t at = q * k + j;
            if (reference.distances[at] != answers.distances[at] &&
                !dis_differs) {
                dis_differs = true;
                first = size_t(j);
            }
            ids_differ |= reference.labels[at] != answers.labels[at];
        }
        m.distance_queries += dis_differs;
        m.label_queries += ids_differ;
        if (dis_differs && m.examples.size() < 5) {
            const size_t at = q * k + first;
            char buf[200];
            snprintf(
                    buf,
                    sizeof(buf),
                    "query %zu rank %zu: distance %.9g (id %lld) vs "
                    "reference %.9g (id %lld)",
                    q,
                    first,
                    answers.distances[at],
                    (long long)answers.labels[at],
                    reference.distances[at],
                    (long long)reference.labels[at]);
            m.examples.push_back(buf);
        }
    }
    return m;
}

} // namespace ivf
} // namespace bench
