#include "costs.h"

#include "common/run_info.h"

#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/HotColdMapping.h>
#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/TaskGroup.h>
#include <faiss/ccd_scheduler/Topology.h>
#include <faiss/ccd_scheduler/TrafficWindow.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <memory>
#include <numeric>
#include <thread>

namespace bench {
namespace mapping {

using namespace faiss::ccd;

namespace {

/// ten_second_window: the costs are measured over the paper's 10 s fast
/// window (1-s buckets), MonitorConfig's default when they were first
/// measured; today's 2 s default holds a fifth of the traffic, so these
/// are upper bounds for it.
MonitorConfig ten_second_window() {
    MonitorConfig config;
    config.fast_window_s = 10;
    config.bucket_s = 1;
    return config;
}

using steady = std::chrono::steady_clock;

double ms_since(steady::time_point t0) {
    return std::chrono::duration<double, std::milli>(steady::now() - t0)
            .count();
}

double ns_since(steady::time_point t0) {
    return std::chrono::duration<double, std::nano>(steady::now() - t0).count();
}

/// kNone: the median of nothing measured (the report prints it as such).
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

/// cpu_now_ns: the calling thread's CPU time. Single-threaded costs are
/// timed with it: on a shared machine the wall clock also counts the time
/// the thread was not running.
double cpu_now_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

double thread_cpu_ms() {
    return cpu_now_ns() * 1e-6;
}

/// Stopwatch: wall-clock and thread CPU time of repeated start/stop laps.
class Stopwatch {
   public:
    void start() {
        wall0_ = steady::now();
        cpu0_ = thread_cpu_ms();
    }
    void stop() {
        cpu_.push_back(thread_cpu_ms() - cpu0_);
        wall_.push_back(ms_since(wall0_));
    }
    Timing medians() const;

   private:
    steady::time_point wall0_;
    double cpu0_ = 0;
    std::vector<double> wall_, cpu_;
};

/// g_sink: results of micro-benchmarks land here, so that no loop is
/// optimised away.
volatile uint64_t g_sink;

Timing Stopwatch::medians() const {
    return {median(wall_, kNone), median(cpu_, kNone)};
}

std::vector<MappingId> all_ids(const DriftingZipf& w) {
    std::vector<MappingId> ids(w.num_ids());
    for (uint32_t i = 0; i < w.num_ids(); i++) {
        ids[i] = w.id(i);
    }
    return ids;
}

double moved_share(
        const std::vector<uint64_t>& traffic,
        const std::vector<int>& from,
        const std::vector<int>& to) {
    long double moved = 0, total = 0;
    for (size_t i = 0; i < traffic.size(); i++) {
        total += traffic[i];
        if (from[i] != to[i]) {
            moved += traffic[i];
        }
    }
    return total > 0 ? double(moved / total) : 0;
}

} // namespace

BuildResult run_build_time(const BuildPlan& plan) {
    const Topology topology = Topology::from_spec(plan.topology);
    const int nccd = topology.num_ccds();
    DriftingZipf w(plan.workload);
    const std::vector<MappingId> ids = all_ids(w);
    // Traffic of ~1M accesses before and after one drift step.
    const std::vector<uint64_t> before = w.expected_bytes(1e6);
    Rng rng(plan.workload.seed + 1);
    w.drift(rng);
    const std::vector<uint64_t> traffic = w.expected_bytes(1e6);
    const std::vector<int> current = map_hot_cold(before, nccd);

    BuildResult r;
    r.num_ids = int(ids.size());
    r.num_ccds = nccd;
    r.runs = plan.runs;
    Stopwatch hot_t, aware_t, snap_t;
    std::vector<int> hot, aware;
    for (int run = 0; run < plan.runs; run++) {
        hot_t.start();
        hot = map_hot_cold(traffic, nccd);
        hot_t.stop();
        aware_t.start();
        aware = map_migration_aware(traffic, current, nccd);
        aware_t.stop();
        std::vector<MappingId> ids_copy = ids;
        std::vector<int> ccds_copy = hot;
        snap_t.start();
        MappingSnapshot snapshot(
                std::move(ids_copy),
                std::move(ccds_copy),
                nccd);
        snap_t.stop();
        g_sink = g_sink + snapshot.size();
    }
    r.hot_cold = hot_t.medians();
    r.migration_aware = aware_t.medians();
    r.snapshot = snap_t.medians();
    r.hot_cold_imbalance = imbalance(ccd_loads(traffic, hot, nccd));
    r.migration_aware_imbalance = imbalance(ccd_loads(traffic, aware, nccd));
    r.moved_share_hot_cold = moved_share(traffic, current, hot);
    r.moved_share_migration_aware = moved_share(traffic, current, aware);

    // A whole re-map inside Monitor::tick: every id recorded once, from
    // the hash map (the pool's default) to a new snapshot; then the pool
    // is put back on the hash map behind the monitor's back and the same
    // traffic recorded again, so that the second re-map also runs the
    // stickiness step over the first one's snapshot.
    Pool pool(topology, PolicyKind::ccd);
    std::vector<double> build[2], tick[2];
    for (int run = 0; run < plan.runs; run++) {
        pool.set_mapping(nullptr);
        auto clock = std::make_shared<ManualClock>(0);
        Monitor monitor(pool, ten_second_window(), clock);
        for (int k = 0; k < 2; k++) {
            pool.set_mapping(nullptr);
            for (uint32_t i = 0; i < w.num_ids(); i++) {
                monitor.record(ids[i], w.list_size(i), traffic[i]);
            }
            clock->set(1 + k);
            const auto t0 = steady::now();
            const bool remapped = monitor.tick();
            const double ms = ms_since(t0);
            if (remapped) {
                tick[k].push_back(ms);
                build[k].push_back(monitor.history().back().build_ms);
            }
        }
    }
    r.monitor_build_first_ms = median(build[0], kNone);
    r.monitor_tick_first_ms = median(tick[0], kNone);
    r.monitor_build_again_ms = median(build[1], kNone);
    r.monitor_tick_again_ms = median(tick[1], kNone);

    // Per-tick costs: a fast window (10 s of 1-s buckets) fed 40000 Zipf
    // records per second; add() timed once the window is full.
    {
        TrafficWindow window(10, 1);
        Rng draws(plan.workload.seed + 3);
        const int per_s = 40000;
        std::vector<double> add_ns;
        for (int sec = 0; sec < 20; sec++) {
            std::vector<std::pair<MappingId, uint64_t>> batch(per_s);
            for (auto& rec : batch) {
                const uint32_t i = w.draw(draws);
                rec = {ids[i], w.bytes(i)};
            }
            const double c0 = cpu_now_ns();
            for (const auto& [id, bytes] : batch) {
                window.add(double(sec), id, bytes);
            }
            if (sec >= 10) {
                add_ns.push_back((cpu_now_ns() - c0) / per_s);
            }
        }
        r.window_add_ns = median(add_ns, kNone);
        r.window_ids = window.totals().size();
        const MappingSnapshot snapshot(ids, hot, nccd);
        const Mapping& placement = snapshot;
        std::vector<double> per_id;
        for (int pass = 0; pass < 5; pass++) {
            std::vector<uint64_t> loads(nccd, 0);
            const double c0 = cpu_now_ns();
            for (const auto& [id, bytes] : window.totals()) {
                loads[placement.pick_ccd(id, nccd)] += bytes;
            }
            per_id.push_back((cpu_now_ns() - c0) / double(r.window_ids));
            g_sink = g_sink + loads[0];
        }
        r.loads_under_ns = median(per_id, kNone);
    }
    return r;
}

namespace {

/// ScanTask: one small-list scan: the minimum L2 distance from the query
/// to each of `vectors` vectors of `dim` floats, written to *out; then the
/// traffic record, when a monitor is on.
struct ScanTask {
    const float* list;
    const float* query;
    int vectors;
    int dim;
    float* out;
    TrafficSink* sink; ///< nullptr: monitor off
    MappingId id;
    uint64_t bytes;

    void operator()() const {
        float best = std::numeric_limits<float>::max();
        for (int v = 0; v < vectors; v++) {
            const float* x = list + size_t(v) * dim;
            // Eight partial sums: vectorisable without -ffast-math, as
            // FAISS's fvec_L2sqr is.
            float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int j = 0; j + 8 <= dim; j += 8) {
                for (int l = 0; l < 8; l++) {
                    const float d = x[j + l] - query[j + l];
                    acc[l] += d * d;
                }
            }
            const float dist = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
                    ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            best = std::min(best, dist);
        }
        *out = best;
        if (sink) {
            sink->record(id, uint64_t(vectors), bytes);
        }
    }
};

struct RecordCost {
    double record_ns = 0;
    double tick_ns_per_record = 0;
};

/// measure_record: record() in batches of `batch`, from the calling
/// thread, and a tick after each batch. Each batch is one second of manual
/// time, so the fast window (10 s) holds the last ten batches, as it would
/// hold the last ten ticks of a monitor ticking every second.
RecordCost measure_record(
        Monitor& monitor,
        ManualClock& clock,
        const std::vector<MappingId>& ids,
        uint64_t bytes,
        int batches,
        int batch) {
    std::vector<double> rec, tick;
    size_t k = 0;
    for (int b = 0; b < batches; b++) {
        double c0 = cpu_now_ns();
        for (int j = 0; j < batch; j++) {
            monitor.record(ids[k], 64, bytes);
            k = k + 1 == ids.size() ? 0 : k + 1;
        }
        rec.push_back((cpu_now_ns() - c0) / batch);
        clock.advance(1.0);
        c0 = cpu_now_ns();
        monitor.tick();
        tick.push_back((cpu_now_ns() - c0) / batch);
    }
    // The first batches grow the buffers; the median skips them.
    return {median(rec, kNone), median(tick, kNone)};
}

template <class Lookup>
double time_lookups(const std::vector<MappingId>& ids, Lookup lookup) {
    std::vector<double> passes;
    for (int pass = 0; pass < 5; pass++) {
        uint64_t sum = 0;
        const double c0 = cpu_now_ns();
        for (MappingId id : ids) {
            sum += uint64_t(lookup(id));
        }
        passes.push_back((cpu_now_ns() - c0) / double(ids.size()));
        g_sink = g_sink + sum;
    }
    return median(passes, kNone);
}

} // namespace

SubmitResult run_submit_path(const SubmitPlan& plan) {
    Pool pool; // FAISS_CCD_TOPOLOGY or hwloc; ccd policy
    const int nccd = pool.topology().num_ccds();
    SubmitResult r;
    r.topology = pool.topology().describe();
    r.num_ccds = nccd;

    // Data: `lists` lists of vectors x dim floats, and one query.
    Rng rng(plan.workload.seed + 2);
    const size_t list_floats = size_t(plan.vectors) * plan.dim;
    std::vector<float> data(size_t(plan.lists) * list_floats);
    for (float& x : data) {
        x = float(rng.uniform());
    }
    std::vector<float> query(plan.dim);
    for (float& x : query) {
        x = float(rng.uniform());
    }

    // The task stream: one rep's worth of workload draws, reused by every
    // rep. Task k scans data list (its index mod `lists`).
    DriftingZipf w(plan.workload);
    const size_t per_rep = size_t(plan.queries_per_rep) * plan.tasks_per_query;
    std::vector<uint32_t> stream(per_rep);
    for (uint32_t& i : stream) {
        i = w.draw(rng);
    }
    const uint64_t task_bytes =
            uint64_t(plan.vectors) * (uint64_t(plan.dim) * 4 + 8);

    // Two maps of every id, equally balanced: the hot-cold map of the
    // stream's own traffic (every task moves the same bytes) and its
    // mirror (CCD c -> nccd - 1 - c), so that a swap moves every id and
    // changes nothing else.
    const std::vector<MappingId> ids = all_ids(w);
    std::vector<uint64_t> stream_traffic(w.num_ids(), 0);
    for (uint32_t i : stream) {
        stream_traffic[i] += task_bytes;
    }
    const std::vector<int> map0 = map_hot_cold(stream_traffic, nccd);
    std::vector<int> map1 = map0;
    for (int& c : map1) {
        c = nccd - 1 - c;
    }
    auto snap0 = std::make_shared<MappingSnapshot>(ids, map0, nccd);
    auto snap1 = std::make_shared<MappingSnapshot>(ids, map1, nccd);
    { r.stream_imbalance = imbalance(ccd_loads(stream_traffic, map0, nccd)); }

    auto make_task = [&](size_t k, float* out, TrafficSink* sink) {
        const uint32_t i = stream[k];
        return ScanTask{
                data.data() + (i % uint32_t(plan.lists)) * list_floats,
                query.data(),
                plan.vectors,
                plan.dim,
                out,
                sink,
                w.id(i),
                task_bytes};
    };

    // Scenario s: monitor on for s in {1, 2}, a thread waking every
    // swap period for s in {2, 3, 4}, publishing a map for s in {2, 3}.
    const char* names[] = {"off", "on", "on+swaps", "swaps", "wakeups"};
    const int nscen = 5;
    r.scenarios.resize(nscen);
    for (int s = 0; s < nscen; s++) {
        r.scenarios[s].name = names[s];
    }
    std::vector<float> results(plan.tasks_per_query, -1.0f);
    std::vector<double> swaps(nscen, 0), remaps(nscen, 0);
    // One monitor per monitored scenario, alive for the whole run and
    // ticking only during its reps, so that its windows hold what a
    // monitor that has run for a while holds (the cost of a tick grows
    // with the ids in the fast window).
    std::unique_ptr<Monitor> monitors[nscen];
    monitors[1] = std::make_unique<Monitor>(pool);
    monitors[2] = std::make_unique<Monitor>(pool);
    std::vector<double> inline_ns;
    for (int round = 0; round < plan.rounds; round++) {
        // One rep's tasks inline on this thread: no pool, no monitor.
        {
            float out = 0;
            const double c0 = cpu_now_ns();
            for (size_t k = 0; k < per_rep; k++) {
                make_task(k, &out, nullptr)();
            }
            inline_ns.push_back((cpu_now_ns() - c0) / double(per_rep));
            g_sink = g_sink + uint64_t(out);
        }
        // Each round starts one scenario later, so that no scenario
        // always follows the same one.
        for (int step = 0; step < nscen; step++) {
            const int s = (round + step) % nscen;
            pool.set_mapping(snap0);
            Monitor* monitor = monitors[s].get();
            uint64_t records_before = 0;
            size_t remaps_before = 0;
            if (monitor) {
                records_before = monitor->stats().records;
                remaps_before = monitor->history().size();
                monitor->start(plan.tick_period_s);
            }
            std::atomic<bool> stop{false};
            uint64_t swap_count = 0;
            std::thread swapper;
            if (s >= 2) {
                const bool publish = s != 4;
                swapper = std::thread([&, publish] {
                    const auto period =
                            std::chrono::duration<double>(plan.swap_period_s);
                    bool flip = true;
                    while (!stop.load(std::memory_order_relaxed)) {
                        std::this_thread::sleep_for(period);
                        if (publish) {
                            pool.set_mapping(flip ? snap1 : snap0);
                        }
                        flip = !flip;
                        swap_count++;
                    }
                });
            }
            const auto t0 = steady::now();
            for (int q = 0; q < plan.queries_per_rep; q++) {
                TaskGroup group(pool);
                for (int j = 0; j < plan.tasks_per_query; j++) {
                    const size_t k = size_t(q) * plan.tasks_per_query + j;
                    group.submit(
                            w.id(stream[k]),
                            make_task(k, &results[j], monitor));
                }
                group.wait();
                for (float& x : results) {
                    r.checks_ok = r.checks_ok && x >= 0;
                    x = -1.0f;
                }
            }
            const double ns = ns_since(t0);
            r.scenarios[s].ns_per_task.push_back(ns / double(per_rep));
            if (swapper.joinable()) {
                stop.store(true, std::memory_order_relaxed);
                swapper.join();
                swaps[s] += double(swap_count) / (ns * 1e-9);
            }
            if (monitor) {
                monitor->stop();
                remaps[s] += double(monitor->history().size() - remaps_before);
                monitor->tick(); // drain what the last period left
                r.checks_ok = r.checks_ok &&
                        monitor->stats().records - records_before == per_rep;
            }
        }
    }
    r.task_inline_ns = median(inline_ns, kNone);
    for (int s = 0; s < nscen; s++) {
        ScenarioResult& sc = r.scenarios[s];
        sc.median_ns = median(sc.ns_per_task, kNone);
        std::vector<double> ratios;
        for (int round = 0; round < plan.rounds; round++) {
            ratios.push_back(
                    sc.ns_per_task[round] / r.scenarios[0].ns_per_task[round]);
        }
        sc.overhead_pct = 100 * (median(ratios, kNone) - 1);
        // Distribution-free 95% interval of the median: order statistics
        // n/2 -+ 0.98 sqrt(n) of the sorted ratios.
        std::sort(ratios.begin(), ratios.end());
        const double n = double(ratios.size());
        const double half = 0.98 * std::sqrt(n);
        const size_t lo = size_t(std::max(0.0, std::floor(n / 2 - half)));
        const size_t hi =
                std::min(ratios.size() - 1, size_t(std::ceil(n / 2 + half)));
        sc.overhead_ci_pct[0] = 100 * (ratios[lo] - 1);
        sc.overhead_ci_pct[1] = 100 * (ratios[hi] - 1);
        sc.swaps_per_s = swaps[s] / plan.rounds;
        sc.remaps_per_rep = remaps[s] / plan.rounds;
    }

    // record(): from this (outside) thread, then from inside a task.
    std::vector<MappingId> zipf_ids(plan.lookups);
    for (MappingId& id : zipf_ids) {
        id = w.id(w.draw(rng));
    }
    {
        auto clock = std::make_shared<ManualClock>(0);
        Monitor monitor(pool, ten_second_window(), clock);
        const RecordCost outside = measure_record(
                monitor,
                *clock,
                zipf_ids,
                task_bytes,
                plan.record_batches,
                plan.record_batch);
        RecordCost inside;
        TaskGroup group(pool);
        group.submit(kLocalMappingId, [&] {
            inside = measure_record(
                    monitor,
                    *clock,
                    zipf_ids,
                    task_bytes,
                    plan.record_batches,
                    plan.record_batch);
        });
        group.wait();
        r.record_outside_ns = outside.record_ns;
        r.record_worker_ns = inside.record_ns;
        r.tick_ns_per_record = inside.tick_ns_per_record;
        r.tick_remaps = monitor.history().size();
    }

    // Mapping lookups: direct, and through the pool's swap protocol.
    std::vector<MappingId> uniform_ids(plan.lookups);
    for (MappingId& id : uniform_ids) {
        id = w.id(uint32_t(rng.below(w.num_ids())));
    }
    const HashMapping hash;
    const Mapping& hash_ref = hash;
    const Mapping& snap_ref = *snap0;
    auto add = [&](const char* name, auto lookup) {
        LookupResult l;
        l.name = name;
        l.zipf_ns = time_lookups(zipf_ids, lookup);
        l.uniform_ns = time_lookups(uniform_ids, lookup);
        r.lookups.push_back(l);
    };
    add("HashMapping::pick_ccd", [&](MappingId id) {
        return hash_ref.pick_ccd(id, nccd);
    });
    add("MappingSnapshot::pick_ccd", [&](MappingId id) {
        return snap_ref.pick_ccd(id, nccd);
    });
    pool.set_mapping(nullptr);
    add("Pool::pick_ccd (hash)", [&](MappingId id) {
        return pool.pick_ccd(id);
    });
    pool.set_mapping(snap0);
    add("Pool::pick_ccd (snapshot)", [&](MappingId id) {
        return pool.pick_ccd(id);
    });

    // set_mapping with no concurrent reader: the writer's own cost.
    {
        std::vector<double> per_call;
        for (int pass = 0; pass < 5; pass++) {
            const int calls = 1000;
            const double c0 = cpu_now_ns();
            for (int c = 0; c < calls; c++) {
                pool.set_mapping(c % 2 ? snap0 : snap1);
            }
            per_call.push_back((cpu_now_ns() - c0) / calls);
        }
        r.set_mapping_ns = median(per_call, kNone);
    }
    return r;
}

} // namespace mapping
} // namespace bench
