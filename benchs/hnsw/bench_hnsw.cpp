/**
 * bench_hnsw: many co-located HNSW tables, one query per task, under a
 * Zipf-skewed closed loop of client threads.
 *
 * Contenders, run in one process on the same tables and the same query
 * sequences (one alive at a time):
 *   V0     HNSWTables on a RoundRobin pool (no stealing): the production
 *          baseline.
 *   V1     HNSWTables on a FlatSteal pool (topology-blind stealing).
 *   V2     HNSWTables on a CCD pool: table -> CCD by MappingId(table, 0),
 *          placed by the traffic Monitor (hot-cold placement from the
 *          bytes each query reports), steal inside the CCD first, cross
 *          to another CCD only when that CCD's backlog reaches the number
 *          of workers per CCD (--threshold overrides).
 *   V2-hash  ablation: the CCD pool as constructed (hash placement, no
 *          monitor, cross-CCD threshold 1).
 *   V2-auto  V2 with HNSWTables' default hand_off (-1): a query moves to
 *          its table's CCD only when the client runs on another CCD; on
 *          a one-CCD machine every query runs in the client thread.
 *          V0-V2-hash force a task per query (hand_off 1).
 *   stock  IndexHNSW::search(1 query) called by each client thread itself,
 *          OpenMP held to one thread: no pool at all, for scale.
 * V0-V2 run on every topology (the real one and emulated ones, e.g. 4x2,
 * 12x8); stock does not depend on it and runs once per client count.
 *
 * Each client replays its own fixed (table, query) sequence: search one
 * query, wait, next (closed loop). Measured: queries/s over the window,
 * P50/P99/P999 of the per-query latency seen by the client, and the pool's
 * counters over the window (cross-CCD steal ratio = cross-CCD steals over
 * all steals). Before timing, every contender's answers to the first
 * queries are checked against stock's; a mismatch makes the run fail
 * (exit 1). A missed performance target does not.
 *
 *   build/benchs/bench_hnsw                  # scaled tables, ~5-10 min
 *   build/benchs/bench_hnsw --quick --out D  # < 30 s (ctest -L bench)
 *   build/benchs/bench_hnsw --full           # the 5K-100K tables
 */

#include "hnsw/hnsw_results.h"
#include "hnsw/hnsw_workload.h"

#include <faiss/HNSWTables.h>
#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>
#include "common/options.h"

namespace bench {
using namespace bench;

namespace {

using faiss::ccd::HNSWTables;
using faiss::ccd::Monitor;
using faiss::ccd::MonitorConfig;
using faiss::ccd::PolicyKind;
using faiss::ccd::Pool;
using faiss::ccd::PoolOptions;
using faiss::ccd::PoolStats;
using faiss::ccd::Runtime;
using faiss::ccd::RuntimeOptions;
using faiss::ccd::Topology;
using idx_t = faiss::Index::idx_t;
using Clock = std::chrono::steady_clock;

/// Settings: the run, as the command line sets it.
struct Settings {
    bool quick = false;
    bool full = false;
    double seconds = 4;
    double warmup = 1.0; ///< also lets V2's monitor place the tables
    std::vector<int> clients = {1, 8, 32};
    std::vector<std::string> topologies = {"auto", "4x2", "12x8"};
    double zipf = 1.0;
    int k = 10;
    /// V2's cross_ccd_threshold; -1 = the workers per CCD.
    int64_t threshold = -1;
    std::string out;
    WorkloadConfig workload;
    std::string command;
};

/// parse_args: the command line into `o`; false (after the usage or the
/// reason) on --help or a bad argument.
bool parse_args(int argc, char** argv, Settings* o, bool* help) {
    Options options(
            "bench_hnsw",
            "many co-located HNSW tables, one query per task, Zipf clients");
    double scale = -1;
    o->workload.cache_dir = std::string(BENCH_BINARY_DIR) + "/hnsw_cache";
    options.flag("full", &o->full, "the issue's 5K-100K tables (hours)");
    options.add("scale", &scale, "S", "table sizes times S (default 0.05)");
    options.add("tables", &o->workload.num_tables, "N", "tables (60)");
    options.add("seconds", &o->seconds, "T", "measured seconds per run (4)");
    options.add("warmup", &o->warmup, "T", "warm-up seconds per run (1)");
    options.add("clients", &o->clients, "LIST", "client counts (1,8,32)");
    options.add(
            "topologies",
            &o->topologies,
            "LIST",
            "pool topologies (auto,4x2,12x8)");
    options.add("zipf", &o->zipf, "S", "Zipf exponent of the tables (1.0)");
    options.add("ef", &o->workload.ef_search, "N", "efSearch (32)");
    options.add("k", &o->k, "N", "neighbours (10)");
    options.add(
            "threshold",
            &o->threshold,
            "N",
            "V2's cross-CCD threshold (-1: the workers per CCD)");
    options.add(
            "cache",
            &o->workload.cache_dir,
            "DIR",
            "built tables cached here (default: the build tree)");
    if (!options.parse(argc, argv)) {
        *help = options.help_asked();
        return false;
    }
    o->quick = options.quick;
    o->out = options.out;
    o->command = options.command();
    if (scale > 0) {
        o->workload.scale = scale;
    }
    if (o->full) {
        o->workload.scale = 1.0;
    }
    if (o->quick) {
        // Small enough to build from scratch inside the time limit of a
        // ctest run: no cache, no Fashion-MNIST (784 dimensions are slow
        // to build).
        o->workload.num_tables = 8;
        o->workload.min_size = 300;
        o->workload.max_size = 1500;
        o->workload.dims = {32, 48, 64};
        o->workload.fashion_mnist = false;
        o->workload.cache_dir = "";
        if (scale <= 0) {
            o->workload.scale = 1.0;
        }
        o->workload.queries_per_table = 50;
        o->seconds = 1;
        o->warmup = 0.5;
        o->clients = {8};
        o->topologies = {"auto", "4x2"};
    }
    for (int c : o->clients) {
        if (c <= 0) {
            fprintf(stderr, "bench_hnsw: --clients wants positive counts\n");
            return false;
        }
    }
    if (o->workload.num_tables <= 0 || o->seconds <= 0 || o->warmup < 0 ||
        o->k <= 0 || o->workload.ef_search <= 0) {
        fprintf(stderr,
                "bench_hnsw: --tables, --seconds, --k and --ef want "
                "positive values\n");
        return false;
    }
    return true;
}

/// Contender: a pool policy and whether the placement monitor and the
/// tuned cross-CCD threshold are on.
struct Contender {
    std::string name;
    PolicyKind policy;
    bool tuned = false;
    int hand_off = 1; ///< HNSWTables::hand_off
};

/// SearchFn: one query (client, table, query number) into D, I.
using SearchFn = std::function<void(int, int, int, float*, idx_t*)>;

/// closed_loop: `clients` threads replay their streams for warmup +
/// seconds; latencies of queries started and finished inside the window.
/// `on_window(begin)` runs at the window's start (true) and end (false).
void closed_loop(
        const Settings& o,
        const std::vector<QueryStream>& streams,
        int clients,
        const SearchFn& search,
        const std::function<void(bool)>& on_window,
        Run& run) {
    enum Phase { kWarmup, kMeasure, kStop };
    std::atomic<int> phase{kWarmup};
    std::vector<std::vector<float>> latencies(clients);
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; c++) {
        threads.emplace_back([&, c] {
            omp_set_num_threads(1); // stock only; the pool runs no OpenMP
            const QueryStream& s = streams[c];
            std::vector<float> D(o.k);
            std::vector<idx_t> I(o.k);
            latencies[c].reserve(1 << 16);
            for (size_t i = 0; phase.load(std::memory_order_relaxed) != kStop;
                 i = (i + 1) % s.table.size()) {
                const bool measuring =
                        phase.load(std::memory_order_relaxed) == kMeasure;
                const auto t0 = Clock::now();
                search(c, int(s.table[i]), int(s.query[i]), D.data(), I.data());
                const auto t1 = Clock::now();
                if (measuring &&
                    phase.load(std::memory_order_relaxed) == kMeasure) {
                    latencies[c].push_back(
                            std::chrono::duration<float, std::micro>(t1 - t0)
                                    .count());
                }
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
    on_window(true);
    const auto begin = Clock::now();
    phase = kMeasure;
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    phase = kStop;
    const auto end = Clock::now();
    on_window(false);
    for (auto& t : threads) {
        t.join();
    }
    std::vector<float> all;
    for (auto& l : latencies) {
        all.insert(all.end(), l.begin(), l.end());
    }
    std::sort(all.begin(), all.end());
    run.clients = clients;
    run.queries = all.size();
    run.seconds = std::chrono::duration<double>(end - begin).count();
    run.qps = double(all.size()) / run.seconds;
    run.p50_us = percentile(all, 0.5);
    run.p99_us = percentile(all, 0.99);
    run.p999_us = percentile(all, 0.999);
    double sum = 0;
    for (float v : all) {
        sum += v;
    }
    run.mean_us = all.empty() ? 0 : sum / all.size();
}

struct Bench {
    Settings o;
    Workload w;
    std::vector<int> ranking;
    std::vector<double> weights;
    std::vector<QueryStream> streams;
    /// expected: stock's answers to the first kChecked queries of stream 0.
    static constexpr size_t kChecked = 200;
    std::vector<std::vector<idx_t>> expected;
    std::vector<std::vector<float>> expected_d;
    Results res;
    std::vector<Run>& runs = res.runs;
    std::vector<std::string>& failures = res.failures;

    void compute_expected() {
        omp_set_num_threads(1);
        const QueryStream& s = streams[0];
        for (size_t i = 0; i < kChecked; i++) {
            std::vector<float> D(o.k);
            std::vector<idx_t> I(o.k);
            w.indexes[s.table[i]]->search(
                    1,
                    w.query(s.table[i], s.query[i]),
                    o.k,
                    D.data(),
                    I.data());
            expected.push_back(I);
            expected_d.push_back(D);
        }
    }

    /// check: the contender answers the first queries as stock does.
    void check(const std::string& name, const SearchFn& search) {
        const QueryStream& s = streams[0];
        std::vector<float> D(o.k);
        std::vector<idx_t> I(o.k);
        for (size_t i = 0; i < kChecked; i++) {
            search(0, int(s.table[i]), int(s.query[i]), D.data(), I.data());
            if (I != expected[i] || D != expected_d[i]) {
                failures.push_back(
                        name + ": query " + std::to_string(i) +
                        " differs from IndexHNSW::search");
                return;
            }
        }
    }

    void run_stock(int clients) {
        Run run;
        run.contender = "stock";
        run.topology = "-";
        run.topology_desc = "client threads, OpenMP 1 thread";
        SearchFn search = [&](int, int t, int q, float* D, idx_t* I) {
            w.indexes[t]->search(1, w.query(t, q), o.k, D, I);
        };
        if (clients == o.clients.front()) {
            check("stock", search);
        }
        closed_loop(
                o,
                streams,
                clients,
                search,
                [](bool) {},
                run);
        report(run);
        runs.push_back(run);
    }

    void run_pool(
            const std::string& spec,
            const Topology& topology,
            const Contender& contender,
            int clients) {
        const std::string& name = contender.name;
        PoolOptions options;
        if (contender.tuned) {
            options.steal.cross_ccd_threshold = o.threshold >= 0
                    ? o.threshold
                    : topology.num_workers() / topology.num_ccds();
        }
        // The monitor re-places tables from the traffic they report; its
        // windows are shortened to the length of a run.
        MonitorConfig config;
        config.fast_window_s = 2;
        config.slow_window_s = 8;
        config.bucket_s = 0.25;
        config.min_remap_interval_s = 0.5;
        auto runtime =
                Runtime::create(RuntimeOptions()
                                        .set_topology(spec)
                                        .set_policy(contender.policy)
                                        .set_pool(options)
                                        .set_monitor(contender.tuned, 0.1)
                                        .set_monitor_config(config));
        Pool& pool = runtime->pool();
        HNSWTables tables(runtime);
        tables.hand_off = contender.hand_off;
        for (int t = 0; t < w.num_tables(); t++) {
            tables.add_table(uint32_t(t), w.indexes[t].get(), false);
        }
        Run run;
        run.contender = name;
        run.topology = spec;
        run.topology_desc = topology.describe();
        run.workers = topology.num_workers();
        run.workers_per_ccd = topology.num_workers() / topology.num_ccds();
        run.has_pool = true;
        SearchFn search = [&](int, int t, int q, float* D, idx_t* I) {
            tables.search(uint32_t(t), 1, w.query(t, q), o.k, D, I);
        };
        if (clients == o.clients.front()) {
            check(name + " " + spec, search);
        }
        PoolStats before;
        closed_loop(
                o,
                streams,
                clients,
                search,
                [&](bool begin) {
                    if (begin) {
                        before = pool.stats();
                    } else {
                        run.delta = pool.stats().since(before);
                    }
                },
                run);
        run.cross_steals = run.delta.cross_ccd_steals();
        run.intra_steals = run.delta.intra_ccd_steals();
        run.tasks = run.delta.tasks_run();
        run.parks = run.delta.parks();
        run.cross_ratio = run.delta.cross_ccd_steal_ratio();
        run.tasks_per_ccd = run.delta.tasks_run_per_ccd();
        if (Monitor* monitor = runtime->monitor()) {
            monitor->stop();
            run.remaps = monitor->stats().remaps;
        }
        report(run);
        runs.push_back(run);
    }

    void report(const Run& r) {
        fprintf(stderr,
                "  %-7s %-6s clients=%-3d %8.0f q/s  P50 %7.0f us  P999 %8.0f "
                "us",
                r.contender.c_str(),
                r.topology.c_str(),
                r.clients,
                r.qps,
                r.p50_us,
                r.p999_us);
        if (r.has_pool) {
            fprintf(stderr,
                    "  steals intra %llu cross %llu (%.0f%% cross)",
                    (unsigned long long)r.intra_steals,
                    (unsigned long long)r.cross_steals,
                    100 * r.cross_ratio);
        }
        if (r.remaps > 0) {
            fprintf(stderr, "  remaps %zu", r.remaps);
        }
        fprintf(stderr, "\n");
    }
};

int main_impl(int argc, char** argv) {
    Bench b;
    bool help = false;
    if (!parse_args(argc, argv, &b.o, &help)) {
        return help ? 0 : 2;
    }
    b.res.run.begin(b.o.command, b.o.quick);
    fprintf(stderr,
            "bench_hnsw: building %d tables (cache: %s)\n",
            b.o.workload.num_tables,
            b.o.workload.cache_dir.empty() ? "none"
                                           : b.o.workload.cache_dir.c_str());
    b.w = build_workload(b.o.workload);
    b.ranking = zipf_ranking(b.w.num_tables(), b.o.workload.seed + 1);
    b.weights = zipf_weights(b.ranking, b.o.zipf);
    int max_clients = 0;
    for (int c : b.o.clients) {
        max_clients = std::max(max_clients, c);
    }
    b.streams = make_streams(
            b.weights,
            b.o.workload.queries_per_table,
            max_clients,
            size_t(1) << 18,
            b.o.workload.seed + 2);
    b.compute_expected();

    const Contender contenders[] = {
            {"V0", PolicyKind::round_robin, false},
            {"V1", PolicyKind::flat_steal, false},
            {"V2", PolicyKind::ccd, true},
            {"V2-hash", PolicyKind::ccd, false},
            {"V2-auto", PolicyKind::ccd, true, -1}};
    for (int c : b.o.clients) {
        fprintf(stderr, "bench_hnsw: %d clients\n", c);
        b.run_stock(c);
        for (const std::string& spec : b.o.topologies) {
            const Topology topology = Topology::from_string(spec);
            for (const Contender& contender : contenders) {
                b.run_pool(spec, topology, contender, c);
            }
        }
    }

    Results& res = b.res;
    const Topology real = Topology::detect();
    res.run.topology = real.describe();
    res.run.topology_note = real.note();
    res.run.end();
    res.note = b.w.note;
    res.workload = b.o.workload;
    res.clients = b.o.clients;
    res.topologies = b.o.topologies;
    res.warmup = b.o.warmup;
    res.seconds = b.o.seconds;
    res.zipf = b.o.zipf;
    res.k = b.o.k;
    res.threshold = b.o.threshold;
    res.checked = Bench::kChecked;
    res.tables = b.w.info;
    res.weights = b.weights;
    const std::vector<Target> targets = judge(res);
    const Report report = to_report(res, targets);
    print_report(report);
    if (!write_report(report, b.o.out)) {
        return 1;
    }
    for (const std::string& f : b.failures) {
        fprintf(stderr, "bench_hnsw: FAILED: %s\n", f.c_str());
    }
    return b.failures.empty() ? 0 : 1;
}

} // namespace
} // namespace bench

int main(int argc, char** argv) {
    try {
        return bench::main_impl(argc, argv);
    } catch (const std::exception& e) {
        fprintf(stderr, "bench_hnsw: %s\n", e.what());
        return 1;
    }
}
