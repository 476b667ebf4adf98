#include "results.h"

#include <cmath>

namespace bench {

namespace {

const TreeRow*
find_tree(const Results& r, const std::string& contender, uint64_t target) {
    for (const TreeRow& row : r.tree) {
        if (row.contender == contender && row.target_tasks == target) {
            return &row;
        }
    }
    return nullptr;
}

const LatencyRow* find_latency(
        const Results& r,
        const std::string& contender,
        const std::string& mode) {
    for (const LatencyRow& row : r.latency) {
        if (row.contender == contender && row.mode == mode) {
            return &row;
        }
    }
    return nullptr;
}

/// ratio: of the median rates; NaN (no value) where either is missing.
double ratio(const TreeRow& a, const TreeRow* b) {
    return b && b->median_rate > 0 ? a.median_rate / b->median_rate : NAN;
}

std::string joined(const std::vector<double>& rates) {
    std::string s;
    char buf[32];
    for (double r : rates) {
        snprintf(buf, sizeof(buf), "%s%.3f", s.empty() ? "" : " ", r * 1e-6);
        s += buf;
    }
    return s;
}

Table throughput_table(const Results& r, Plot* plot) {
    Table t;
    t.title = "(a) Independent tiny tasks: throughput";
    t.text = "T threads each submit " + std::to_string(r.tasks_per_submitter) +
            " tasks and wait for them; median and best of " +
            std::to_string(r.throughput_reps) + " reps, Mtasks/s.";
    t.columns = {"contender", "T", "Mtasks/s", "best", "every rep"};
    plot->title = "(a) independent tiny tasks";
    plot->xlabel = "submitting threads";
    plot->ylabel = "Mtasks/s (median)";
    for (const std::string& c : r.contenders) {
        Series s{c, {}, {}};
        for (const ThroughputRow& row : r.throughput) {
            if (row.contender == c) {
                t.rows.push_back(
                        {c,
                         row.submitters,
                         row.median_rate * 1e-6,
                         row.best_rate * 1e-6,
                         joined(row.rates)});
                s.x.push_back(row.submitters);
                s.y.push_back(row.median_rate * 1e-6);
            }
        }
        plot->series.push_back(s);
    }
    return t;
}

Table latency_table(const Results& r, Plot* plot) {
    Table t;
    t.title = "(a) Submit-to-start latency, us";
    t.text = "parked: " + std::to_string(r.parked_samples) + " samples, " +
            std::to_string(r.parked_gap_us) +
            " us apart (workers asleep); spinning: " +
            std::to_string(r.spinning_samples) +
            " samples, each submitted as soon as the previous one started.";
    for (const std::string& c : r.latency_references) {
        t.text += " " + c +
                " is a reference, not a contender: the same pool without "
                "pinning its workers.";
    }
    for (const std::string& s : r.latency_skipped) {
        t.text += " Not measured: " + s + ".";
    }
    t.columns = {
            "contender",
            "mode",
            "samples",
            "P50",
            "P99",
            "P999",
            "mean",
            "max"};
    plot->title = "(a) submit-to-start latency";
    plot->ylabel = "us (log)";
    plot->yscale = "log";
    plot->kind = "bar";
    std::vector<std::string> names = r.contenders;
    names.insert(
            names.end(),
            r.latency_references.begin(),
            r.latency_references.end());
    for (const char* mode : {"parked", "spinning"}) {
        Series p50{std::string(mode) + " P50", {}, {}};
        Series p99{std::string(mode) + " P99", {}, {}};
        for (const std::string& c : names) {
            const LatencyRow* row = find_latency(r, c, mode);
            if (row == nullptr) {
                continue;
            }
            t.rows.push_back(
                    {c,
                     mode,
                     row->samples,
                     row->p50_us,
                     row->p99_us,
                     row->p999_us,
                     row->mean_us,
                     row->max_us});
            const double x = double(&c - names.data());
            p50.x.push_back(x);
            p50.y.push_back(row->p50_us);
            p99.x.push_back(x);
            p99.y.push_back(row->p99_us);
        }
        plot->series.push_back(p50);
        plot->series.push_back(p99);
    }
    plot->categories = names;
    return t;
}

Table tree_table(const Results& r, Plot* plot) {
    Table t;
    t.title = "(b) Uneven fork-join tree";
    t.text = "Every node is a task; 0-4 children and 0-200 work rounds per "
             "node, chosen by hash. Median Mtasks/s (ratios of medians) over "
             "the reps, and the best rep; serial = plain recursion on one "
             "thread, no tasks.";
    t.columns = {
            "tasks",
            "contender",
            "Mtasks/s",
            "best",
            "vs mutex-queue",
            "vs tbb",
            "vs serial",
            "max depth"};
    plot->title = "(b) uneven fork-join tree";
    plot->xlabel = "tasks in the tree";
    plot->ylabel = "Mtasks/s (median)";
    plot->xscale = "log";
    std::vector<std::string> names = {"serial"};
    names.insert(names.end(), r.contenders.begin(), r.contenders.end());
    for (const std::string& c : names) {
        Series s{c, {}, {}};
        for (const TreeRow& row : r.tree) {
            if (row.contender != c) {
                continue;
            }
            t.rows.push_back(
                    {row.tasks,
                     c,
                     row.median_rate * 1e-6,
                     row.best_rate * 1e-6,
                     ratio(row, find_tree(r, "mutex-queue", row.target_tasks)),
                     ratio(row, find_tree(r, "tbb", row.target_tasks)),
                     ratio(row, find_tree(r, "serial", row.target_tasks)),
                     row.max_depth});
            s.x.push_back(double(row.tasks));
            s.y.push_back(row.median_rate * 1e-6);
        }
        if (!s.x.empty()) {
            plot->series.push_back(s);
        }
    }
    return t;
}

Table counters_table(const Results& r) {
    Table t;
    t.title = "Pool counters (measured reps)";
    t.columns = {
            "scenario",
            "contender",
            "tasks run",
            "local pops",
            "intra-CCD steals",
            "cross-CCD steals",
            "parks"};
    auto add = [&t](const std::string& scenario,
                    const std::string& contender,
                    const PoolCounters& c) {
        if (c.present) {
            const faiss::ccd::PoolStats& s = c.delta;
            t.rows.push_back(
                    {scenario,
                     contender,
                     s.tasks_run(),
                     s.local_pops(),
                     s.intra_ccd_steals(),
                     s.cross_ccd_steals(),
                     s.parks()});
        }
    };
    for (const ThroughputRow& row : r.throughput) {
        add("(a) T=" + std::to_string(row.submitters),
            row.contender,
            row.counters);
    }
    for (const LatencyRow& row : r.latency) {
        add("latency " + row.mode, row.contender, row.counters);
    }
    for (const TreeRow& row : r.tree) {
        add("(b) " + std::to_string(row.tasks), row.contender, row.counters);
    }
    return t;
}

} // namespace

Report to_report(const Results& r) {
    Report rep;
    rep.benchmark = "pool";
    rep.title = "bench_pool: the pool against a mutex queue, OpenMP and oneTBB";
    rep.run = r.run;
    rep.notes.push_back(
            "exactly-once check: " +
            (r.failures.empty()
                     ? std::string("passed for every run")
                     : std::to_string(r.failures.size()) + " FAILURES"));
    for (const std::string& f : r.failures) {
        rep.notes.push_back("FAILURE: " + f);
    }
    for (size_t i = 0; i < r.contenders.size(); i++) {
        rep.notes.push_back(
                r.contenders[i] + ": " + r.contender_descriptions[i]);
    }
    rep.targets = r.targets;
    Plot a, lat, b;
    rep.tables = {
            throughput_table(r, &a),
            latency_table(r, &lat),
            tree_table(r, &b),
            counters_table(r)};
    rep.plots = {a, lat, b};
    return rep;
}

} // namespace bench
