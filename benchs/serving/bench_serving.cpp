/**
 * bench_serving: the CCD mode as a search node serves, against the stock
 * OpenMP modes it replaces, side by side in one process.
 *
 *   bench_serving [--out DIR] [--quick|--full] [--parts LIST]
 *                 [--budget SECONDS] [--sets LIST] [--nprobes LIST]
 *
 * Contenders, all over one index (ivf_contenders.h): stock-pm0-t1
 * (parallel_mode 0, one OpenMP thread per caller), stock-pm0 and stock-pm1
 * (hardware_concurrency OpenMP threads per caller), and ccd (the fork's
 * IndexIVF::search in PARALLEL_MODE_CCD, switched as a user does); the
 * closed and open loops add ccd-fifo (the same search on a runtime whose
 * pool admits callers first come, first served: PoolOptions::fifo_callers).
 * The stock figure of a measurement is the stock contender fastest in its
 * selection round (see take_turns).
 *
 * Parts (--parts, default all of them):
 *   closed  closed loop, 1 2 4 8 16 32 client threads sending single
 *           queries; QPS and latency percentiles;
 *   open    open loop, Poisson arrivals at 30 50 70 90% of the best stock
 *           contender's highest closed-loop QPS (ivf_scenarios.h: latency
 *           from the arrival time, 64 sender threads);
 *   batch   one calling thread, batches of 1 4 16 64 256 1024 4096;
 *   sweep   per-query work from tens of microseconds to milliseconds:
 *           synthetic d 32, 128, 960 and Fashion-MNIST (d 784), each as
 *           IVF Flat, SQ8 and PQ, nprobe 1 4 16 64 256; one client and 8
 *           clients per cell (--sets and --nprobes pick some of them:
 *           sets are named like syn-d32-Flat, fmnist-d784-PQ56np).
 * closed, open and batch run on the headline data sets of bench_ivf
 * (synthetic 500K x 128 IVF1024 nprobe 32; Fashion-MNIST IVF256 nprobe 8).
 * k = 10 everywhere. Every measurement is taken in rounds; inside a round
 * the contenders take turns, in a rotated order, so noise hits them alike;
 * figures are medians over rounds. Each contender's answers are compared
 * with stock-pm0-t1's on the same queries (distances).
 *
 * Writes DIR/serving.json (tables, curves, the targets judged:
 * serving_report.h) and prints its tables and targets; scripts/report.sh
 * renders its markdown and plots. Exit status 0 when it ran (a missed
 * target too), 1 when a data set could not be run, 2 on bad arguments.
 */

#include "common/options.h"
#include "ivf/ivf_contenders.h"
#include "ivf/ivf_data.h"
#include "ivf/ivf_scenarios.h"
#include "serving/serving_report.h"

#include <faiss/IVFScanCost.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#ifndef BENCH_BINARY_DIR
#define BENCH_BINARY_DIR "build"
#endif

namespace bench {
namespace serving {
namespace {

using ivf::Answers;
using ivf::Contender;
using ivf::Dataset;
using ivf::RunResult;
using ivf::Workload;

constexpr int kK = 10; // every measurement's k
constexpr int kSenders = 64;
constexpr size_t kGtQueries = 2000; // bench_ivf's, to share its cache

/// Settings: the run, as the command line sets it.
struct Settings {
    std::string out;
    bool quick = false;
    bool full = false;
    std::set<std::string> parts = {"closed", "open", "batch", "sweep"};
    double budget_s = 0.3;       ///< per contender per round of a measurement
    std::set<std::string> sets;  ///< sweep sets to run; empty = all
    std::vector<size_t> nprobes; ///< sweep nprobes; empty = the default
    std::string command;
};

/// parse_args: false (after the usage or the reason) on --help or a bad
/// argument; *help tells which.
bool parse_args(int argc, char** argv, Settings* o, bool* help) {
    Options options(
            "bench_serving",
            "the CCD mode as a search node serves, against the "
            "stock OpenMP modes");
    std::vector<std::string> parts = {"closed", "open", "batch", "sweep"};
    std::vector<std::string> sets;
    options.flag("full", &o->full, "5 rounds per measurement (default 3)");
    options.add("parts", &parts, "LIST", "closed,open,batch,sweep (all)");
    options.add(
            "budget",
            &o->budget_s,
            "SECONDS",
            "per contender per round of a measurement (0.3)");
    options.add(
            "sets",
            &sets,
            "LIST",
            "sweep sets, e.g. syn-d32-Flat,fmnist-d784-PQ56np (all)");
    options.add(
            "nprobes",
            &o->nprobes,
            "LIST",
            "sweep nprobes (1,4,16,64,256)");
    if (!options.parse(argc, argv)) {
        *help = options.help_asked();
        return false;
    }
    o->out = options.out;
    o->quick = options.quick;
    o->command = options.command();
    o->parts.clear();
    for (const std::string& part : parts) {
        if (part != "closed" && part != "open" && part != "batch" &&
            part != "sweep") {
            fprintf(stderr, "bench_serving: unknown part '%s'\n", part.c_str());
            return false;
        }
        o->parts.insert(part);
    }
    o->sets.insert(sets.begin(), sets.end());
    for (size_t np : o->nprobes) {
        if (np == 0) {
            fprintf(stderr, "bench_serving: --nprobes wants positive values\n");
            return false;
        }
    }
    if (o->budget_s <= 0) {
        fprintf(stderr, "bench_serving: --budget: a positive number\n");
        return false;
    }
    if (o->quick && o->full) {
        fprintf(stderr, "bench_serving: --quick or --full, not both\n");
        return false;
    }
    if (o->quick) {
        o->budget_s = std::min(o->budget_s, 0.02);
    }
    return true;
}

int cores() {
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

/// Lineup: the contenders over one index; [0] is the reference, the
/// stock ones first, then the CCD mode ("ccd"); with_fifo adds the CCD mode
/// on a runtime whose pool admits callers first come, first served
/// ("ccd-fifo", PoolOptions::fifo_callers), the option that serves tails.
struct Lineup {
    std::vector<std::unique_ptr<Contender>> all;
    size_t num_stock = 3;
    size_t ccd = 3; ///< the CCD mode's index in `all`
    Lineup(faiss::IndexIVF* index, bool with_fifo) {
        all.push_back(ivf::make_stock(index, 0, 1));
        all.push_back(ivf::make_stock(index, 0, cores()));
        all.push_back(ivf::make_stock(index, 1, cores()));
        all.push_back(ivf::make_ccd_mode(index));
        if (with_fifo) {
            faiss::ccd::PoolOptions fifo;
            fifo.fifo_callers = true;
            all.push_back(ivf::make_ccd_mode_on(
                    "ccd-fifo",
                    index,
                    faiss::ccd::Runtime::create(
                            faiss::ccd::RuntimeOptions().set_pool(fifo)),
                    "fifo_callers"));
        }
    }
};

void settle() {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

/// add_delta: `now - before` into `sum` (read between runs, when no
/// search changes ivf_ccd_stats).
void add_delta(
        const faiss::ccd::IVFSearchCCDStats& now,
        const faiss::ccd::IVFSearchCCDStats& before,
        faiss::ccd::IVFSearchCCDStats* sum) {
    sum->calls += now.calls - before.calls;
    sum->inline_calls += now.inline_calls - before.inline_calls;
    sum->units += now.units - before.units;
    sum->units_by_caller += now.units_by_caller - before.units_by_caller;
    sum->helpers += now.helpers - before.helpers;
    sum->helpers_with_units +=
            now.helpers_with_units - before.helpers_with_units;
    sum->estimated_ms += now.estimated_ms - before.estimated_ms;
    sum->scan_ms += now.scan_ms - before.scan_ms;
}

/// take_turns: `rounds` rounds; in each, every contender runs `run` once,
/// starting with another contender each round. With more than one round,
/// the first is the selection round: the stock contender to compare with
/// is the fastest there, and the figures are the medians of the other
/// rounds (the round whose QPS is the median, per contender). Taking the
/// best of three stock contenders from the rounds that are reported would
/// favour stock by the noise alone (two of them run the same code for a
/// single query). Answers are compared with the reference's (contender 0)
/// from the first round.
template <class Run>
Measured
take_turns(Lineup& lineup, const Dataset& ds, size_t nq, int rounds, Run run) {
    const size_t n = lineup.all.size();
    faiss::ccd::IVFSearchCCDStats shape;
    std::vector<std::vector<RunResult>> got(n);
    std::vector<Answers> answers(n);
    for (Answers& a : answers) {
        a.resize(nq, kK);
    }
    for (int r = 0; r < rounds; r++) {
        for (size_t t = 0; t < n; t++) {
            const size_t c = (t + size_t(r)) % n;
            lineup.all[c]->prepare();
            settle();
            const faiss::ccd::IVFSearchCCDStats before =
                    faiss::ccd::ivf_ccd_stats;
            RunResult res = run(*lineup.all[c], &answers[c]);
            res.finalize();
            if (c == lineup.ccd) {
                add_delta(faiss::ccd::ivf_ccd_stats, before, &shape);
            }
            got[c].push_back(std::move(res));
        }
    }
    Measured m;
    m.queries = nq;
    m.shape = shape;
    for (const auto& c : lineup.all) {
        m.names.push_back(c->name());
    }
    for (size_t c = 1; c < lineup.num_stock; c++) {
        if (got[c][0].qps > got[m.best_stock][0].qps) {
            m.best_stock = c;
        }
    }
    const size_t skip = rounds > 1 ? 1 : 0;
    for (size_t c = 0; c < n; c++) {
        std::sort(
                got[c].begin() + skip,
                got[c].end(),
                [](const auto& a, const auto& b) {
                    return a.qps < b.qps;
                });
        m.runs.push_back(got[c][skip + (got[c].size() - skip) / 2]);
        m.runs.back().samples_ms.clear();
        m.mismatches.push_back(
                ivf::compare_answers(answers[0], answers[c], nq, kK)
                        .distance_queries);
        const size_t ngt = std::min(nq, ds.gt_nq);
        m.recall10.push_back(
                ngt > 0 ? ivf::recall_at(
                                  ds,
                                  10,
                                  ngt,
                                  answers[c].labels.data(),
                                  kK)
                        : -1.0);
    }
    return m;
}

/// per_query_s: one thread's time for one query (stock-pm0-t1, median of
/// a few after a warm-up), which sizes every measurement of the index.
double per_query_s(Lineup& lineup, const Dataset& ds) {
    Contender& ref = *lineup.all[0];
    ref.prepare();
    const size_t n = std::min<size_t>(ds.nq, 32);
    const Workload w{ds.queries.data(), ds.d, 0, n, kK};
    for (auto& c : lineup.all) {
        c->prepare();
        ivf::warm_up(*c, w);
    }
    ref.prepare();
    Answers a;
    a.resize(n, kK);
    RunResult r = ivf::run_single(ref, w, &a);
    r.finalize();
    return std::max(1e-6, r.latency.p50 / 1000);
}

size_t queries_for(const Dataset& ds, double seconds, double per_query_s) {
    const size_t want = size_t(seconds / per_query_s);
    return std::max<size_t>(
            std::min<size_t>(want, ds.nq),
            std::min<size_t>(ds.nq, 16));
}

/// closed_loop: `nc` clients sending single queries (one client: the
/// single scenario), about a budget's worth of queries per core they use.
Measured closed_loop(
        const Settings& o,
        Lineup& lineup,
        const Dataset& ds,
        double t1,
        int nc,
        int rounds) {
    const size_t nq = queries_for(ds, o.budget_s * std::min(nc, cores()), t1);
    const Workload w{ds.queries.data(), ds.d, 0, nq, kK};
    return take_turns(
            lineup,
            ds,
            nq,
            rounds,
            [&](const Contender& c, Answers* a) {
                return nc == 1 ? ivf::run_single(c, w, a)
                               : ivf::run_clients(c, w, nc, a);
            });
}

void say(const char* what, const Lineup& lineup, const Measured& m) {
    const size_t best = m.best_stock;
    const RunResult& ccd = m.runs[lineup.ccd];
    const RunResult& st = m.runs[best];
    const double calls = double(std::max<size_t>(1, m.shape.calls));
    fprintf(stderr,
            "bench_serving: %-34s ccd %8.0f q/s P99 %7.3f ms | best stock "
            "(%s) %8.0f q/s P99 %7.3f ms | %.2fx | inline %.0f%%, "
            "%.2f helpers/call\n",
            what,
            ccd.qps,
            ccd.latency.p99,
            lineup.all[best]->name().c_str(),
            st.qps,
            st.latency.p99,
            st.qps > 0 ? ccd.qps / st.qps : 0,
            100.0 * double(m.shape.inline_calls) / calls,
            double(m.shape.helpers) / calls);
    for (size_t c = lineup.ccd + 1; c < lineup.all.size(); c++) {
        fprintf(stderr,
                "bench_serving: %-34s %s %8.0f q/s P99 %7.3f ms P999 %7.3f "
                "ms (best stock P999 %7.3f ms)\n",
                "",
                lineup.all[c]->name().c_str(),
                m.runs[c].qps,
                m.runs[c].latency.p99,
                m.runs[c].latency.p999,
                st.latency.p999);
    }
}

/// set_info: what the report says of an index served.
SetInfo set_info(const Dataset& ds, const std::string& name, double t1) {
    SetInfo s;
    s.name = name;
    s.description = ds.description;
    s.codec = ds.codec;
    s.d = ds.d;
    s.nb = ds.nb;
    s.nlist = ds.nlist;
    s.nprobe = ds.index->nprobe;
    s.work_ms = t1 * 1000;
    return s;
}

/// Collected: what a run measured, for the report.
struct Collected {
    std::vector<SetInfo> sets;
    std::vector<Point> points;
};

/// serve_dataset: the closed, open and batch parts on one data set.
void serve_dataset(Collected* out, const Settings& o, Dataset& ds) {
    Lineup lineup(ds.index.get(), true);
    const double t1 = per_query_s(lineup, ds);
    const int rounds = o.quick ? 1 : (o.full ? 5 : 3);
    SetInfo info = set_info(ds, ds.name, t1);
    for (const auto& c : lineup.all) {
        info.contenders.push_back(c->name() + ": " + c->describe());
    }
    auto add = [&](Point p, Measured m) {
        p.set = ds.name;
        p.work_ms = info.work_ms;
        p.m = std::move(m);
        out->points.push_back(std::move(p));
    };

    double max_stock_qps = 0;
    if (o.parts.count("closed") || o.parts.count("open")) {
        const std::vector<int> clients = o.quick
                ? std::vector<int>{1, 8}
                : std::vector<int>{1, 2, 4, 8, 16, 32};
        for (int nc : clients) {
            const Measured m = closed_loop(o, lineup, ds, t1, nc, rounds);
            max_stock_qps = std::max(max_stock_qps, m.runs[m.best_stock].qps);
            say((ds.name + " closed " + std::to_string(nc) + " clients")
                        .c_str(),
                lineup,
                m);
            Point p;
            p.part = "closed";
            p.clients = nc;
            add(p, m);
        }
    }
    info.max_stock_qps = max_stock_qps;
    out->sets.push_back(info);

    if (o.parts.count("open") && max_stock_qps > 0) {
        for (double load : {0.3, 0.5, 0.7, 0.9}) {
            const double rate = load * max_stock_qps;
            // At least 2000 arrivals (a P999 above the maximum), about
            // four budgets' worth of time.
            const size_t nq = std::min(
                    ds.nq,
                    std::max<size_t>(
                            o.quick ? 200 : 2000,
                            size_t(rate * 4 * o.budget_s)));
            const Workload w{ds.queries.data(), ds.d, 0, nq, kK};
            const Measured m = take_turns(
                    lineup,
                    ds,
                    nq,
                    rounds,
                    [&](const Contender& c, Answers* a) {
                        return ivf::run_open_loop(c, w, rate, kSenders, 42, a);
                    });
            char what[64];
            snprintf(
                    what,
                    sizeof(what),
                    "%s open %.0f%%",
                    ds.name.c_str(),
                    load * 100);
            say(what, lineup, m);
            Point p;
            p.part = "open";
            p.load = load;
            p.rate_qps = rate;
            add(p, m);
        }
    }

    if (o.parts.count("batch")) {
        // One caller: a gate for callers changes nothing.
        Lineup plain(ds.index.get(), false);
        const std::vector<size_t> batches = o.quick
                ? std::vector<size_t>{1, 64, 1024}
                : std::vector<size_t>{1, 4, 16, 64, 256, 1024, 4096};
        for (size_t b : batches) {
            if (b > ds.nq) {
                continue;
            }
            const size_t nq =
                    std::max(b, queries_for(ds, o.budget_s * cores(), t1));
            const size_t whole = std::min(ds.nq, (nq + b - 1) / b * b);
            const Workload w{ds.queries.data(), ds.d, 0, whole, kK};
            const Measured m = take_turns(
                    plain,
                    ds,
                    whole,
                    rounds,
                    [&](const Contender& c, Answers* a) {
                        return ivf::run_batches(c, w, b, a);
                    });
            say((ds.name + " batch " + std::to_string(b)).c_str(), plain, m);
            Point p;
            p.part = "batch";
            p.batch = b;
            add(p, m);
        }
    }
}

/// SweepSet: one index of the sweep.
struct SweepSet {
    std::string label;
    bool fmnist = false;
    ivf::SyntheticSpec syn;
    ivf::FmnistSpec fm;
};

std::vector<SweepSet> sweep_sets(const Settings& o) {
    std::vector<SweepSet> sets;
    auto synthetic = [&](int d,
                         size_t nb,
                         size_t nlist,
                         size_t nblobs,
                         const std::string& codec) {
        SweepSet s;
        s.label = "syn-d" + std::to_string(d) + "-" + codec;
        s.syn.d = d;
        s.syn.nb = nb;
        s.syn.nlist = nlist;
        s.syn.nblobs = nblobs;
        s.syn.ntrain = std::min<size_t>(nb, 50000);
        s.syn.nq = 4000;
        s.syn.codec = codec;
        sets.push_back(s);
    };
    if (o.quick) {
        synthetic(32, 20000, 128, 256, "Flat");
        synthetic(32, 20000, 128, 256, "PQ8np");
        return sets;
    }
    for (const char* codec : {"Flat", "SQ8", "PQ8np"}) {
        synthetic(32, 200000, 1024, 2048, codec);
    }
    for (const char* codec : {"Flat", "SQ8", "PQ16np"}) {
        synthetic(128, 200000, 1024, 2048, codec);
    }
    for (const char* codec : {"Flat", "SQ8", "PQ48np"}) {
        synthetic(960, 30000, 256, 512, codec);
    }
    for (const char* codec : {"Flat", "SQ8", "PQ56np"}) {
        SweepSet s;
        s.label = std::string("fmnist-d784-") + codec;
        s.fmnist = true;
        s.fm.codec = codec;
        s.fm.nq = 4000;
        sets.push_back(s);
    }
    return sets;
}

void sweep(Collected* out, const Settings& o, const std::string& cache) {
    const std::vector<size_t> nprobes = !o.nprobes.empty() ? o.nprobes
            : o.quick ? std::vector<size_t>{1, 16}
                      : std::vector<size_t>{1, 4, 16, 64, 256};
    const int rounds = o.quick ? 1 : (o.full ? 5 : 3);
    const int clients = 8;
    for (const SweepSet& set : sweep_sets(o)) {
        if (!o.sets.empty() && !o.sets.count(set.label)) {
            continue;
        }
        Dataset ds;
        try {
            ds = set.fmnist ? ivf::load_fmnist(set.fm, 200, cache)
                            : ivf::make_synthetic(set.syn, 200, cache);
        } catch (const std::exception& e) {
            fprintf(stderr,
                    "bench_serving: sweep: %s skipped: %s\n",
                    set.label.c_str(),
                    e.what());
            continue;
        }
        Lineup lineup(ds.index.get(), false);
        for (size_t nprobe : nprobes) {
            if (nprobe > ds.nlist) {
                continue;
            }
            ds.index->nprobe = nprobe;
            const double t1 = per_query_s(lineup, ds);
            for (int nc : {1, clients}) {
                const Measured m = closed_loop(o, lineup, ds, t1, nc, rounds);
                char what[96];
                snprintf(
                        what,
                        sizeof(what),
                        "%s nprobe %zu, %d cl",
                        set.label.c_str(),
                        nprobe,
                        nc);
                say(what, lineup, m);
                Point p;
                p.set = set.label;
                p.part = "sweep";
                p.clients = nc;
                p.nprobe = nprobe;
                p.work_ms = t1 * 1000;
                p.m = m;
                out->points.push_back(std::move(p));
            }
        }
    }
}

int run(const Settings& o) {
    namespace fs = std::filesystem;
    for (const std::string& name : o.sets) {
        bool known = false;
        for (const SweepSet& set : sweep_sets(o)) {
            known = known || set.label == name;
        }
        if (!known) {
            fprintf(stderr,
                    "bench_serving: --sets: no sweep set '%s'\n",
                    name.c_str());
            return 2;
        }
    }
    const std::string cache =
            std::string(BENCH_BINARY_DIR) + "/bench_ivf_cache";
    fs::create_directories(cache);
    RunInfo info;
    info.begin(o.command, o.quick);
    const auto runtime = faiss::ccd::Runtime::get_default();
    info.topology = runtime->pool().topology().describe();
    info.topology_note = runtime->pool().topology().note();
    fprintf(stderr, "bench_serving: topology %s\n", info.topology.c_str());

    Collected got;
    int failed = 0;
    if (o.parts.count("closed") || o.parts.count("open") ||
        o.parts.count("batch")) {
        for (const std::string name : {"synthetic", "fmnist"}) {
            try {
                Dataset ds;
                if (name == "synthetic") {
                    ivf::SyntheticSpec spec;
                    if (o.quick) {
                        spec.nb = 20000;
                        spec.nlist = 128;
                        spec.nblobs = 256;
                        spec.nq = 2000;
                        spec.nprobe = 8;
                    }
                    ds = ivf::make_synthetic(
                            spec,
                            o.quick ? 200 : kGtQueries,
                            cache);
                } else {
                    if (o.quick) {
                        continue;
                    }
                    ds = ivf::load_fmnist(ivf::FmnistSpec(), kGtQueries, cache);
                }
                serve_dataset(&got, o, ds);
            } catch (const std::exception& e) {
                fprintf(stderr,
                        "bench_serving: %s: %s\n",
                        name.c_str(),
                        e.what());
                failed++;
            }
        }
    }
    if (o.parts.count("sweep")) {
        sweep(&got, o, cache);
    }
    info.end();
    const Report report = to_report(info, o.budget_s, got.sets, got.points);
    print_report(report);
    if (!write_report(report, o.out)) {
        return 1;
    }
    return failed > 0 ? 1 : 0;
}

} // namespace
} // namespace serving
} // namespace bench

int main(int argc, char** argv) {
    bench::serving::Settings o;
    bool help = false;
    if (!bench::serving::parse_args(argc, argv, &o, &help)) {
        return help ? 0 : 2;
    }
    try {
        return bench::serving::run(o);
    } catch (const std::exception& e) {
        fprintf(stderr, "bench_serving: %s\n", e.what());
        return 1;
    }
}
