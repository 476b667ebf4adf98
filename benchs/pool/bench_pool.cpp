/**
 * bench_pool: the pool against a central mutex queue, OpenMP tasks and
 * oneTBB, side by side in one process, on the same workloads.
 *
 *   bench_pool [--out DIR] [--quick] [--reps N] [--topology SPEC]
 *
 * Scenarios (workload.h has the workloads, contender_*.cpp how each runtime
 * runs them):
 *   (a) throughput: T = 1..4 submitting threads, each submits M tiny tasks
 *       and waits for its own; tasks/s from the first submit to all done.
 *   (a) latency: submit-to-start of one task, with the workers asleep
 *       ("parked": 2 ms between submissions) and awake ("spinning": the
 *       next one submitted as soon as the previous one started).
 *   (b) tree: an uneven recursive fork-join tree, every node a task
 *       (~10^6 tasks with --quick, ~10^6 and ~10^7 by default).
 * Every run is checked: each task ran exactly once (count and key sum).
 *
 * Writes DIR/pool.json (every number, as tables, plots and targets) and
 * prints the targets; scripts/report.sh DIR/pool.json renders its markdown
 * and plots.
 * Exit status: 0, or 1 when an exactly-once check failed (a missed
 * performance target is reported, not an error), 2 on bad arguments.
 */

#include "contender.h"
#include "results.h"
#include "workload.h"

#include <faiss/ccd_scheduler/detail/Futex.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <string>
#include <thread>
#include <vector>
#include "common/options.h"

#ifndef BENCH_SOURCE_DIR
#define BENCH_SOURCE_DIR "."
#endif

namespace bench {
using namespace bench;

namespace {

/// Plan: the sizes and repetitions of one run. Default: about 2-3
/// minutes on a 2-core machine; --quick: about 20 s (the ctest smoke
/// test). `reps` > 0 overrides every measurement's repetitions.
struct Plan {
    int64_t tasks_per_submitter = 200000;
    int max_submitters = 4;
    int throughput_reps = 5;
    int parked_samples = 1000;
    int spinning_samples = 5000;
    int parked_gap_us = 2000;
    std::vector<uint64_t> tree_targets = {1000000, 10000000};
    std::vector<int> tree_reps = {5, 3};
};

Plan make_plan(bool quick, int reps) {
    Plan p;
    if (quick) {
        p.tasks_per_submitter = 20000;
        p.throughput_reps = 3;
        p.parked_samples = 100;
        p.spinning_samples = 1000;
        p.tree_targets = {1000000};
        p.tree_reps = {3};
    }
    if (reps > 0) {
        p.throughput_reps = reps;
        for (int& r : p.tree_reps) {
            r = reps;
        }
    }
    return p;
}

using faiss::ccd::PolicyKind;
using faiss::ccd::PoolStats;
using faiss::ccd::Topology;

const std::vector<std::string> kContenders =
        {"pool-ccd", "pool-flat", "mutex-queue", "openmp", "tbb"};

/// Bench: one run of every scenario; fills `results`.
class Bench {
   public:
    Bench(const Options& options, int reps, const Topology& topology)
            : plan_(make_plan(options.quick, reps)),
              topology_(topology),
              hw_(std::max(1u, std::thread::hardware_concurrency())) {
        r_.run.begin(options.command(), options.quick);
        r_.run.topology = topology.describe();
        r_.run.topology_note = topology.note();
        r_.tasks_per_submitter = plan_.tasks_per_submitter;
        r_.max_submitters = plan_.max_submitters;
        r_.throughput_reps = plan_.throughput_reps;
        r_.parked_samples = plan_.parked_samples;
        r_.spinning_samples = plan_.spinning_samples;
        r_.parked_gap_us = plan_.parked_gap_us;
        r_.tree_reps = plan_.tree_reps;
    }

    Results run() {
        // Every contender lives for the whole run; they take turns, one
        // repetition each, so that load from elsewhere on the machine hits
        // all of them alike. Between turns the previous one's idle threads
        // are given time to go to sleep (settle).
        for (const std::string& name : kContenders) {
            contenders_.push_back(make(name));
            r_.contenders.push_back(name);
            r_.contender_descriptions.push_back(contenders_.back()->describe());
        }
        warm_up();
        throughput();
        latency();
        tree();
        judge_targets();
        contenders_.clear();
        r_.run.end();
        return r_;
    }

   private:
    std::unique_ptr<Contender> make(const std::string& name) const {
        if (name == "pool-ccd") {
            return make_pool_contender(topology_, PolicyKind::ccd);
        }
        if (name == "pool-flat") {
            return make_pool_contender(topology_, PolicyKind::flat_steal);
        }
        if (name == "mutex-queue") {
            return make_mutex_queue_contender(int(hw_));
        }
        if (name == "openmp") {
            return make_openmp_contender(int(hw_));
        }
        return make_tbb_contender(int(hw_));
    }

    /// settle: let the threads of the contender that just ran go to sleep
    /// (OpenMP's, TBB's and the pool's spin a while after their last task)
    /// before the next one starts.
    static void settle() {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }

    /// warm_up: one small untimed run of each workload per contender
    /// (thread creation, first-touch of queues and allocator arenas).
    void warm_up() {
        Tree small = Tree::sized(plan_.tree_targets.front() / 16);
        for (auto& c : contenders_) {
            c->independent(
                    plan_.max_submitters,
                    plan_.tasks_per_submitter / 10);
            c->tree(small);
            settle();
        }
    }

    /// check: the exactly-once test of one repetition.
    void check(
            const std::string& what,
            uint64_t expected_count,
            uint64_t expected_key_sum) {
        const Tally::Totals got = Tally::total();
        if (got.count != expected_count || got.key_sum != expected_key_sum) {
            std::string msg = what + ": ran " + std::to_string(got.count) +
                    " tasks, expected " + std::to_string(expected_count) +
                    (got.key_sum != expected_key_sum ? " (key sum differs)"
                                                     : "");
            fprintf(stderr,
                    "bench_pool: EXACTLY-ONCE FAILURE: %s\n",
                    msg.c_str());
            r_.failures.push_back(msg);
        }
    }

    static PoolCounters counters_since(
            const Contender& c,
            const PoolStats& before) {
        PoolCounters pc;
        PoolStats now;
        if (c.pool_stats(&now)) {
            pc.present = true;
            pc.delta = now.since(before);
        }
        return pc;
    }
    static PoolStats stats_of(const Contender& c) {
        PoolStats s;
        c.pool_stats(&s);
        return s;
    }

    void throughput() {
        const int64_t m = plan_.tasks_per_submitter;
        const size_t n = contenders_.size();
        for (int t = 1; t <= plan_.max_submitters; t++) {
            uint64_t key_sum = 0;
            for (int s = 0; s < t; s++) {
                for (int64_t i = 0; i < m; i++) {
                    key_sum += task_key(s, i);
                }
            }
            std::vector<ThroughputRow> rows(n);
            std::vector<PoolStats> before(n);
            for (size_t k = 0; k < n; k++) {
                rows[k].contender = contenders_[k]->name();
                rows[k].submitters = t;
                rows[k].tasks = t * m;
                before[k] = stats_of(*contenders_[k]);
            }
            for (int rep = 0; rep < plan_.throughput_reps; rep++) {
                for (size_t k = 0; k < n; k++) {
                    Tally::reset();
                    const double secs = contenders_[k]->independent(t, m);
                    check("(a) " + rows[k].contender +
                                  " T=" + std::to_string(t),
                          uint64_t(rows[k].tasks),
                          key_sum);
                    rows[k].rates.push_back(double(rows[k].tasks) / secs);
                    settle();
                }
            }
            for (size_t k = 0; k < n; k++) {
                rows[k].counters = counters_since(*contenders_[k], before[k]);
                rows[k].median_rate = median(rows[k].rates);
                rows[k].best_rate = *std::max_element(
                        rows[k].rates.begin(),
                        rows[k].rates.end());
                fprintf(stderr,
                        "(a) throughput %-11s T=%d  %7.2f Mtasks/s\n",
                        rows[k].contender.c_str(),
                        t,
                        rows[k].median_rate * 1e-6);
                r_.throughput.push_back(rows[k]);
            }
        }
    }

    LatencyRow
    probe_latency(Contender& c, const std::string& mode, int samples) {
        const bool parked = mode == "parked";
        std::vector<double> us;
        us.reserve(samples);
        const int warmup = 10;
        PoolStats before;
        // The sample is stamped by the task itself, so how fast the driver
        // notices the start does not matter. Parked: the driver sleeps
        // through the gap right after submitting (its core stays free for
        // the worker being woken). Spinning: it polls, yielding now and
        // then so that it does not starve a worker sharing its core.
        std::this_thread::sleep_for(
                std::chrono::microseconds(plan_.parked_gap_us));
        for (int i = 0; i < warmup + samples; i++) {
            if (i == warmup) {
                before = stats_of(c);
            }
            Probe probe;
            probe.submitted_ns = now_ns();
            c.submit_probe(&probe);
            if (parked) {
                std::this_thread::sleep_for(
                        std::chrono::microseconds(plan_.parked_gap_us));
            }
            int64_t started;
            for (int polls = 1;
                 (started = probe.started_ns.load(std::memory_order_acquire)) ==
                 0;
                 polls++) {
                if (polls % 64 == 0) {
                    std::this_thread::yield();
                } else {
                    faiss::ccd::detail::cpu_relax();
                }
            }
            if (i >= warmup) {
                us.push_back(double(started - probe.submitted_ns) * 1e-3);
            }
        }
        std::sort(us.begin(), us.end());
        LatencyRow row;
        row.contender = c.name();
        row.mode = mode;
        row.samples = samples;
        row.p50_us = percentile(us, 0.5);
        row.p99_us = percentile(us, 0.99);
        row.p999_us = percentile(us, 0.999);
        row.max_us = us.back();
        double sum = 0;
        for (double v : us) {
            sum += v;
        }
        row.mean_us = sum / double(us.size());
        row.counters = counters_since(c, before);
        fprintf(stderr,
                "(a) latency    %-11s %-8s P50 %6.2f  P99 %7.2f  P999 %7.2f "
                "us\n",
                row.contender.c_str(),
                mode.c_str(),
                row.p50_us,
                row.p99_us,
                row.p999_us);
        return row;
    }

    /// latency: one contender after the other (a sample is one task, so
    /// taking turns per sample would measure the turn-taking instead).
    /// Then, as a reference, pool-ccd with unpinned workers: the pool pins
    /// by default, and a pinned worker can only be woken on its own core.
    void latency() {
        for (auto& c : contenders_) {
            if (!c->has_probe()) {
                r_.latency_skipped.push_back(
                        c->name() +
                        ": an OpenMP task can only be created by a thread "
                        "of a parallel region's team; there is no outside "
                        "submitter to time");
                continue;
            }
            r_.latency.push_back(
                    probe_latency(*c, "parked", plan_.parked_samples));
            r_.latency.push_back(
                    probe_latency(*c, "spinning", plan_.spinning_samples));
            settle();
        }
        std::unique_ptr<Contender> unpinned =
                make_pool_contender(topology_, PolicyKind::ccd, false);
        r_.latency_references.push_back(unpinned->name());
        r_.latency.push_back(
                probe_latency(*unpinned, "parked", plan_.parked_samples));
        r_.latency.push_back(
                probe_latency(*unpinned, "spinning", plan_.spinning_samples));
    }

    static void serial_node(const Tree& tree, uint64_t key, int depth) {
        uint64_t kids[Tree::kMaxChildren];
        const int n = tree.visit(key, depth, kids);
        for (int i = 0; i < n; i++) {
            serial_node(tree, kids[i], depth + 1);
        }
    }

    void tree() {
        const size_t n = contenders_.size();
        for (size_t s = 0; s < plan_.tree_targets.size(); s++) {
            const uint64_t target = plan_.tree_targets[s];
            const Tree tree = Tree::sized(target);
            const Tree::Expected expected = tree.expected();
            const std::string size = std::to_string(expected.nodes);

            // Row 0 is the serial reference, row k + 1 contender k.
            std::vector<TreeRow> rows(n + 1);
            std::vector<PoolStats> before(n);
            for (size_t k = 0; k <= n; k++) {
                rows[k].contender =
                        k == 0 ? "serial" : contenders_[k - 1]->name();
                rows[k].target_tasks = target;
                rows[k].tasks = expected.nodes;
                rows[k].max_depth = tree.max_depth;
                if (k > 0) {
                    before[k - 1] = stats_of(*contenders_[k - 1]);
                }
            }
            for (int rep = 0; rep < plan_.tree_reps[s]; rep++) {
                for (size_t k = 0; k <= n; k++) {
                    Tally::reset();
                    const int64_t t0 = now_ns();
                    if (k == 0) {
                        serial_node(tree, tree.root, 0);
                    } else {
                        contenders_[k - 1]->tree(tree);
                    }
                    const double secs = double(now_ns() - t0) * 1e-9;
                    check("(b) " + rows[k].contender + " " + size + " tasks",
                          expected.nodes,
                          expected.key_sum);
                    rows[k].rates.push_back(double(expected.nodes) / secs);
                    settle();
                }
            }
            for (size_t k = 0; k <= n; k++) {
                if (k > 0) {
                    rows[k].counters =
                            counters_since(*contenders_[k - 1], before[k - 1]);
                }
                rows[k].median_rate = median(rows[k].rates);
                rows[k].best_rate = *std::max_element(
                        rows[k].rates.begin(),
                        rows[k].rates.end());
                fprintf(stderr,
                        "(b) tree %-9s %-11s %7.2f Mtasks/s\n",
                        size.c_str(),
                        rows[k].contender.c_str(),
                        rows[k].median_rate * 1e-6);
                r_.tree.push_back(rows[k]);
            }
        }
    }

    const TreeRow* tree_row(const std::string& name, uint64_t target) const {
        for (const TreeRow& row : r_.tree) {
            if (row.contender == name && row.target_tasks == target) {
                return &row;
            }
        }
        return nullptr;
    }
    const LatencyRow* latency_row(
            const std::string& name,
            const std::string& mode) const {
        for (const LatencyRow& row : r_.latency) {
            if (row.contender == name && row.mode == mode) {
                return &row;
            }
        }
        return nullptr;
    }

    /// judge_targets: the goals, for both pool policies, on the
    /// largest tree.
    void judge_targets() {
        const uint64_t target = plan_.tree_targets.back();
        const TreeRow* mutex = tree_row("mutex-queue", target);
        const TreeRow* tbb = tree_row("tbb", target);
        const TreeRow* serial = tree_row("serial", target);
        const std::string tree_size =
                " (" + std::to_string(mutex ? mutex->tasks : 0) + "-task tree)";
        // ns of core time per task: what `hw_` busy cores spend per task.
        auto core_ns = [this](const TreeRow* row) {
            return double(hw_) * 1e9 / row->median_rate;
        };
        for (const char* pool : {"pool-ccd", "pool-flat"}) {
            const TreeRow* p = tree_row(pool, target);
            if (p == nullptr || mutex == nullptr || tbb == nullptr) {
                continue;
            }
            const double serial_ns = 1e9 / serial->median_rate;
            Target vs_mutex;
            vs_mutex.target = std::string(pool) + " tree >= 5x mutex-queue";
            const double rm = p->median_rate / mutex->median_rate;
            vs_mutex.met = rm >= 5.0;
            vs_mutex.measured = fmt("%.2fx", rm) + tree_size +
                    fmt(", medians; best reps: %.2fx",
                        p->best_rate / mutex->best_rate);
            vs_mutex.why = fmt("per task, in core time: %.0f ns for the pool, ",
                               core_ns(p)) +
                    fmt("%.0f ns for mutex-queue, %.0f ns of the node's own "
                        "work (serial run); ",
                        core_ns(mutex),
                        serial_ns) +
                    fmt("even a free scheduler cannot beat mutex-queue by "
                        "more than %.1fx here",
                        core_ns(mutex) / serial_ns);
            r_.targets.push_back(vs_mutex);

            Target vs_tbb;
            vs_tbb.target = std::string(pool) + " tree >= 1.0x tbb";
            const double rt = p->median_rate / tbb->median_rate;
            vs_tbb.met = rt >= 1.0;
            vs_tbb.measured = fmt("%.2fx", rt) + tree_size +
                    fmt(", medians; best reps: %.2fx",
                        p->best_rate / tbb->best_rate);
            vs_tbb.why = fmt("per task, in core time: %.0f ns for the pool, "
                             "%.0f ns for tbb",
                             core_ns(p),
                             core_ns(tbb)) +
                    fmt(" (the node's own work: %.0f ns)", serial_ns);
            r_.targets.push_back(vs_tbb);
        }
        for (const char* pool : {"pool-ccd", "pool-flat"}) {
            const LatencyRow* parked = latency_row(pool, "parked");
            const LatencyRow* spinning = latency_row(pool, "spinning");
            if (parked == nullptr || spinning == nullptr) {
                continue;
            }
            Target t;
            t.target = std::string(pool) +
                    " median submit-to-start <= 2 us to a parked worker";
            t.met = parked->p50_us <= 2.0;
            t.measured = fmt("P50 %.2f us", parked->p50_us) + " (" +
                    std::to_string(parked->counters.delta.parks()) +
                    " parks during " + std::to_string(parked->samples) +
                    " samples)";
            t.why =
                    fmt("to an awake (spinning) worker the P50 is %.2f us; "
                        "the rest is the kernel waking a thread asleep in "
                        "futex_wait (syscall, scheduler, the idle core "
                        "leaving its sleep state), which no user-space queue "
                        "removes once a worker is parked",
                        spinning->p50_us);
            if (const LatencyRow* u =
                        latency_row("pool-ccd-unpinned", "parked")) {
                t.why +=
                        fmt("; with unpinned workers (pool-ccd-unpinned) "
                            "the parked P50 is %.2f us",
                            u->p50_us);
            }
            for (const char* other : {"mutex-queue", "tbb"}) {
                if (const LatencyRow* o = latency_row(other, "parked")) {
                    t.why += "; " + std::string(other) +
                            fmt(", which sleeps the same way, has a parked "
                                "P50 of %.2f us",
                                o->p50_us);
                }
            }
            r_.targets.push_back(t);
        }
    }

    Plan plan_;
    Topology topology_;
    unsigned hw_;
    std::vector<std::unique_ptr<Contender>> contenders_; ///< kContenders
    Results r_;
};

int main_impl(int argc, char** argv) {
    Options options(
            "bench_pool",
            "the pool against a mutex queue, OpenMP tasks and oneTBB");
    int reps = -1;
    std::string topology_spec = "auto";
    options.add(
            "reps",
            &reps,
            "N",
            "repetitions of every measurement (default: 5, 3 for the "
            "10^7-task tree; --quick: 3)");
    options.add(
            "topology",
            &topology_spec,
            "SPEC",
            "pool topology: auto, NxM or CPU lists (auto: "
            "FAISS_CCD_TOPOLOGY, else hwloc)");
    if (!options.parse(argc, argv)) {
        return options.help_asked() ? 0 : 2;
    }
    if (reps == 0 || reps < -1) {
        fprintf(stderr, "bench_pool: --reps wants a positive number\n");
        return 2;
    }
    const Topology topology = Topology::from_string(topology_spec);
    printf("command: %s\n", options.command().c_str());
    printf("topology: %s\n", topology.describe().c_str()); // note included
    fflush(stdout);

    const Results results = Bench(options, reps, topology).run();
    const Report report = to_report(results);
    print_report(report);
    if (!write_report(report, options.out)) {
        return 1;
    }
    return results.failures.empty() ? 0 : 1;
}

} // namespace
} // namespace bench

int main(int argc, char** argv) {
    try {
        return bench::main_impl(argc, argv);
    } catch (const std::exception& e) {
        fprintf(stderr, "bench_pool: %s\n", e.what());
        return 1;
    }
}
