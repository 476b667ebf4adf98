#include "report.h"

#include <faiss/ccd_scheduler/Monitor.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace bench {
namespace mapping {

namespace {

using faiss::ccd::MonitorConfig;

constexpr double kBuildTargetMs = 5.0;
constexpr double kSubmitTargetPct = 3.0;

/// num: one number, "-" when it is not finite.
std::string num(const char* format, double v) {
    if (!std::isfinite(v)) {
        return "-";
    }
    char buf[64];
    snprintf(buf, sizeof(buf), format, v);
    return buf;
}

std::string mib(double bytes) {
    return num("%.1f", bytes / (1024.0 * 1024.0));
}

/// MonitorSummary: the re-maps of one monitor run, in a few numbers.
struct MonitorSummary {
    size_t remaps = 0;
    double moved_mean = NAN, moved_max = NAN; ///< bytes
    double pct_mean = NAN, pct_max = NAN;     ///< of the fast window
    double ids_moved_mean = NAN;
    double build_ms_median = NAN;
    double tick_ms_median = NAN, tick_ms_max = NAN;
};

MonitorSummary summarize_monitor(const MonitorRun& run) {
    MonitorSummary s;
    s.remaps = run.remaps.size();
    if (!run.remaps.empty()) {
        double sum = 0, pct_sum = 0, ids_sum = 0;
        s.moved_max = 0;
        s.pct_max = 0;
        std::vector<double> build;
        for (const RemapInfo& r : run.remaps) {
            const double pct = r.window_bytes
                    ? 100.0 * double(r.traffic_moved) / double(r.window_bytes)
                    : 0;
            sum += double(r.traffic_moved);
            pct_sum += pct;
            ids_sum += double(r.ids_moved);
            s.moved_max = std::max(s.moved_max, double(r.traffic_moved));
            s.pct_max = std::max(s.pct_max, pct);
            build.push_back(r.build_ms);
        }
        s.moved_mean = sum / double(s.remaps);
        s.pct_mean = pct_sum / double(s.remaps);
        s.ids_moved_mean = ids_sum / double(s.remaps);
        s.build_ms_median = median(build, NAN);
    }
    s.tick_ms_median = median(run.tick_ms, NAN);
    s.tick_ms_max = run.tick_ms.empty()
            ? NAN
            : *std::max_element(run.tick_ms.begin(), run.tick_ms.end());
    return s;
}

/// estimate_pct: record() from a worker, plus the snapshot lookup's extra
/// over the hash lookup, as a share of one task run inline.
double estimate_pct(const SubmitResult& s) {
    double extra_lookup = 0;
    double hash = NAN, snap = NAN;
    for (const LookupResult& l : s.lookups) {
        if (l.name == "Pool::pick_ccd (hash)") {
            hash = l.zipf_ns;
        } else if (l.name == "Pool::pick_ccd (snapshot)") {
            snap = l.zipf_ns;
        }
    }
    if (std::isfinite(hash) && std::isfinite(snap)) {
        extra_lookup = std::max(0.0, snap - hash);
    }
    return 100.0 * (s.record_worker_ns + extra_lookup) / s.task_inline_ns;
}

/// at_most: a target met when `value` <= `limit`.
Target at_most(
        const std::string& name,
        double value,
        double limit,
        const std::string& unit,
        const std::string& note) {
    Target t;
    t.target = name + " <= " + num("%.0f", limit) + " " + unit;
    t.measured =
            num("%.2f", value) + " " + unit + (note.empty() ? "" : "; " + note);
    t.met = value <= limit;
    return t;
}

} // namespace

std::vector<Target> make_targets(const Run& run) {
    const BuildResult& b = run.build;
    std::vector<Target> t;
    const std::string size = std::to_string(b.num_ids) + " ids, " +
            std::to_string(b.num_ccds) + " CCDs";
    t.push_back(at_most(
            "map build, map_hot_cold + MappingSnapshot, " + size +
                    ", wall-clock median",
            b.hot_cold.wall_ms + b.snapshot.wall_ms,
            kBuildTargetMs,
            "ms",
            "thread CPU " + num("%.2f", b.hot_cold.cpu_ms + b.snapshot.cpu_ms) +
                    " ms"));
    t.push_back(at_most(
            "map build, map_migration_aware + MappingSnapshot",
            b.migration_aware.wall_ms + b.snapshot.wall_ms,
            kBuildTargetMs,
            "ms",
            "thread CPU " +
                    num("%.2f", b.migration_aware.cpu_ms + b.snapshot.cpu_ms) +
                    " ms"));
    t.push_back(at_most(
            "map build inside Monitor::tick (RemapRecord::build_ms, "
            "migration-aware, with a previous snapshot)",
            b.monitor_build_again_ms,
            kBuildTargetMs,
            "ms",
            "the whole tick(): " + num("%.2f", b.monitor_tick_again_ms) +
                    " ms"));
    for (const ScenarioResult& s : run.submit.scenarios) {
        if (s.name == "on" || s.name == "on+swaps") {
            t.push_back(at_most(
                    "submit path, monitor " + s.name +
                            " vs off (end to end, median of paired "
                            "ratios)",
                    s.overhead_pct,
                    kSubmitTargetPct,
                    "%",
                    "95% interval [" + num("%+.2f", s.overhead_ci_pct[0]) +
                            ", " + num("%+.2f", s.overhead_ci_pct[1]) +
                            "] %; medians " + num("%.0f", s.median_ns) +
                            " vs " +
                            num("%.0f", run.submit.scenarios[0].median_ns) +
                            " ns/task"));
        }
    }
    t.push_back(
            at_most("submit path, estimate: record() in a worker + snapshot "
                    "lookup extra, over one inline task",
                    estimate_pct(run.submit),
                    kSubmitTargetPct,
                    "%",
                    ""));
    const SubmitResult& s = run.submit;
    t.push_back(at_most(
            "monitor's whole CPU per task, estimate: the above + the tick "
            "thread's drain per record (background, off the submit path)",
            estimate_pct(s) + 100 * s.tick_ns_per_record / s.task_inline_ns,
            kSubmitTargetPct,
            "%",
            "tick " + num("%.0f", s.tick_ns_per_record) +
                    " ns per record, task " + num("%.0f", s.task_inline_ns) +
                    " ns"));
    return t;
}

// ---------------------------------------------------------------- report

namespace {

/// series_of: y against 0, 1, 2, ...
Series series_of(const std::string& label, const std::vector<double>& y) {
    Series s{label, {}, y};
    for (size_t i = 0; i < y.size(); i++) {
        s.x.push_back(double(i));
    }
    return s;
}

void add_drift(const Run& run, Report* rep) {
    const Plan& p = run.plan;
    const WorkloadConfig& wc = p.drift.workload;
    const double threshold = MonitorConfig().imbalance_threshold;
    Table placements, monitors, remaps;
    placements.title = "(1) Drifting Zipf workload: per-CCD traffic imbalance";
    placements.text = std::to_string(wc.tables) + " tables x " +
            std::to_string(wc.lists) + " lists; " +
            std::to_string(p.drift.accesses_per_s) +
            " list scans per simulated second, Zipf(" + num("%g", wc.zipf_s) +
            ") over a ranking that drifts every " +
            num("%g", wc.drift_period_s) + " s (rotates by " +
            std::to_string(wc.rotate) + " ranks, then each of the top " +
            std::to_string(wc.shuffle_top) +
            " ranks swaps with a random one with probability " +
            num("%g", wc.shuffle_p) +
            "); a scan moves list size x (code size + 8) bytes (sizes "
            "log-normal, median 128; code sizes 32/64/128 B). Imbalance of a "
            "second = max/mean of its per-CCD bytes under the map in force. "
            "round-robin = global list index mod nCCD. paper / "
            "migration-aware = Monitor (the paper's fast window, 10 s in "
            "1-s buckets, threshold " +
            num("%g", threshold) +
            ") with migration_aware false / true, ticked once per simulated "
            "second; \"(2 s)\" rows: the same with a 2-s fast window "
            "(MonitorConfig's default since the scale model chose it). oracle "
            "= map_hot_cold on the second's own traffic; "
            "lower-bound = max(1, hottest id's bytes / mean CCD bytes). "
            "Steady = seconds >= the fast window. Simulated time: the same "
            "numbers on every machine.";
    placements.columns = {
            "topology",
            "placement",
            "steady mean",
            "P95",
            "max",
            "all-seconds mean"};
    monitors.title = "(1) Re-maps of each monitor";
    monitors.columns = {
            "topology",
            "monitor",
            "re-maps",
            "ids moved / re-map",
            "moved / re-map, MiB",
            "max MiB",
            "% of window, mean",
            "max",
            "build ms (median)",
            "tick ms median",
            "max"};
    remaps.title = "(1) Every re-map";
    remaps.columns = {
            "topology",
            "monitor",
            "time s",
            "imbalance before",
            "after",
            "ids placed",
            "ids moved",
            "MiB moved",
            "% of window",
            "build ms"};
    for (const DriftResult& d : run.drift) {
        Plot imbalance{
                "(1) " + d.spec + ": per-CCD traffic imbalance",
                "simulated second",
                "max / mean CCD bytes"};
        for (const PlacementSeries& s : d.series) {
            placements.rows.push_back(
                    {d.spec,
                     s.name,
                     s.steady.mean,
                     s.steady.p95,
                     s.steady.max,
                     s.all.mean});
            imbalance.series.push_back(series_of(s.name, s.imbalance));
        }
        rep->plots.push_back(imbalance);
        Plot window{
                "(1) " + d.spec + ": each monitor's own view (stats())",
                "tick",
                "fast-window imbalance"};
        window.file = "monitors";
        Plot ticks{"(1) " + d.spec + ": tick() wall time", "tick", "ms"};
        ticks.file = "monitors";
        ticks.yscale = "log";
        for (const MonitorRun& m : d.monitors) {
            const MonitorSummary s = summarize_monitor(m);
            monitors.rows.push_back(
                    {d.spec,
                     m.name,
                     int64_t(s.remaps),
                     s.ids_moved_mean,
                     s.moved_mean / (1 << 20),
                     s.moved_max / (1 << 20),
                     s.pct_mean,
                     s.pct_max,
                     s.build_ms_median,
                     s.tick_ms_median,
                     s.tick_ms_max});
            for (const RemapInfo& r : m.remaps) {
                remaps.rows.push_back(
                        {d.spec,
                         m.name,
                         r.time,
                         r.imbalance_before,
                         r.imbalance_after,
                         r.ids_placed,
                         r.ids_moved,
                         double(r.traffic_moved) / (1 << 20),
                         r.window_bytes ? 100.0 * double(r.traffic_moved) /
                                         double(r.window_bytes)
                                        : 0.0,
                         r.build_ms});
            }
            window.series.push_back(series_of(m.name, m.window_imbalance));
            ticks.series.push_back(series_of(m.name, m.tick_ms));
        }
        rep->plots.push_back(window);
        rep->plots.push_back(ticks);
        double mean_bytes = 0;
        for (uint64_t b : d.bytes_per_s) {
            mean_bytes += double(b);
        }
        mean_bytes /= double(std::max<size_t>(1, d.bytes_per_s.size()));
        // Seconds in which no map can get under the re-map threshold: the
        // hottest id alone carries more than threshold x a CCD's share.
        int unfixable = 0;
        for (const PlacementSeries& s : d.series) {
            if (s.name == "lower-bound") {
                for (double v : s.imbalance) {
                    unfixable += v > threshold;
                }
            }
        }
        rep->notes.push_back(
                "(1) " + d.spec + " (" + d.topology +
                "): a simulated second "
                "carries " +
                num("%.1f", mean_bytes / (1 << 20)) +
                " MiB on average; seconds whose lower bound is above the "
                "re-map threshold (no map can satisfy it): " +
                std::to_string(unfixable) + " of " + std::to_string(d.seconds) +
                "; simulated in " + num("%.1f", d.wall_s) + " s");
    }
    rep->tables.push_back(placements);
    rep->tables.push_back(monitors);
    rep->tables.push_back(remaps);
}

void add_build(const Run& run, Report* rep) {
    const BuildResult& b = run.build;
    Table t;
    t.title = "(2) Map build time";
    t.text = std::to_string(b.num_ids) + " ids, " + std::to_string(b.num_ccds) +
            " CCDs, expected Zipf traffic after one drift step; median of " +
            std::to_string(b.runs) +
            " runs. The migration-aware map starts from the hot-cold map of "
            "the traffic before the drift step. Monitor rows: one tick() "
            "that re-maps every id from the hash map (every id recorded "
            "once). Per-tick costs that do not depend on re-mapping (thread "
            "CPU time): TrafficWindow::add " +
            num("%.0f", b.window_add_ns) +
            " ns per record (two per record drained: fast and slow window); "
            "Monitor::loads_under " +
            num("%.0f", b.loads_under_ns) + " ns per id, " +
            num("%.2f", 1e-6 * b.loads_under_ns * double(b.window_ids)) +
            " ms for the " + std::to_string(b.window_ids) +
            " ids that 10 s of 40000 scans/s leave in the window. Map "
            "quality on that traffic: hot-cold imbalance " +
            num("%.3f", b.hot_cold_imbalance) + ", moving " +
            num("%.1f", 100 * b.moved_share_hot_cold) +
            "% of the traffic; migration-aware " +
            num("%.3f", b.migration_aware_imbalance) + ", moving " +
            num("%.1f", 100 * b.moved_share_migration_aware) + "%.";
    t.columns = {"step", "wall ms", "thread CPU ms"};
    t.rows = {
            {"map_hot_cold", b.hot_cold.wall_ms, b.hot_cold.cpu_ms},
            {"map_migration_aware",
             b.migration_aware.wall_ms,
             b.migration_aware.cpu_ms},
            {"MappingSnapshot", b.snapshot.wall_ms, b.snapshot.cpu_ms},
            {"Monitor re-map, no previous snapshot (build_ms)",
             b.monitor_build_first_ms,
             NAN},
            {"... its tick(), drain included", b.monitor_tick_first_ms, NAN},
            {"Monitor re-map, with a previous snapshot (build_ms)",
             b.monitor_build_again_ms,
             NAN},
            {"... its tick(), drain included", b.monitor_tick_again_ms, NAN}};
    Plot plot{
            "(2) map build, " + std::to_string(b.num_ids) + " ids, " +
                    std::to_string(b.num_ccds) + " CCDs",
            "",
            "ms"};
    plot.kind = "bar";
    Series wall{"wall", {}, {}}, cpu{"thread CPU", {}, {}};
    for (size_t i = 0; i < t.rows.size(); i++) {
        plot.categories.push_back(t.rows[i][0].s);
        wall.x.push_back(double(i));
        wall.y.push_back(t.rows[i][1].x);
        cpu.x.push_back(double(i));
        cpu.y.push_back(t.rows[i][2].x);
    }
    plot.series = {wall, cpu};
    rep->tables.push_back(t);
    rep->plots.push_back(plot);
}

void add_submit(const Run& run, Report* rep) {
    const SubmitPlan& p = run.plan.submit;
    const SubmitResult& s = run.submit;
    Table t;
    t.title = "(3) Submit path: monitor off / on / on + snapshot swaps";
    t.text = "Pool: " + s.topology + ", ccd policy. A task scans " +
            std::to_string(p.vectors) + " vectors x " + std::to_string(p.dim) +
            " floats (L2 to one query, minimum kept) of one of " +
            std::to_string(p.lists) + " lists; " +
            std::to_string(p.tasks_per_query) +
            " tasks per TaskGroup (one query), " +
            std::to_string(p.queries_per_rep) +
            " queries per rep from one client thread; reps interleaved "
            "off/on/on+swaps/swaps/wakeups for " +
            std::to_string(p.rounds) +
            " rounds. on: each task calls Monitor::record, tick every " +
            num("%.0f", 1e3 * p.tick_period_s) +
            " ms; on+swaps: also set_mapping every " +
            num("%.0f", 1e3 * p.swap_period_s) +
            " ms from another thread, alternating a balanced map and its "
            "mirror (every id moves); swaps: that thread without the "
            "monitor; wakeups: a thread that wakes as often and publishes "
            "nothing (a control: the price of a wake-up on busy cores). "
            "ns/task = rep wall time / tasks. Overhead = median over rounds "
            "of (scenario / off) - 1, with a distribution-free ~95% interval "
            "of that median. One task run inline (no pool; thread CPU time): " +
            num("%.0f", s.task_inline_ns) +
            " ns. Imbalance of one rep's tasks under the starting map: " +
            num("%.3f", s.stream_imbalance) + ".";
    t.columns = {
            "scenario",
            "median ns/task",
            "overhead vs off, %",
            "~95% interval from",
            "to",
            "swaps/s",
            "monitor re-maps/rep"};
    Plot reps{
            "(3) submit path: ns/task of every rep",
            "round",
            "wall ns / task"};
    for (const ScenarioResult& sc : s.scenarios) {
        const bool off = sc.name == "off";
        t.rows.push_back(
                {sc.name,
                 sc.median_ns,
                 off ? NAN : sc.overhead_pct,
                 off ? NAN : sc.overhead_ci_pct[0],
                 off ? NAN : sc.overhead_ci_pct[1],
                 sc.swaps_per_s,
                 sc.remaps_per_rep});
        reps.series.push_back(series_of(sc.name, sc.ns_per_task));
    }
    Table bare;
    bare.title = "(3) Bare costs, the calling thread's CPU time, medians";
    bare.text =
            "Estimated recording cost per task: record() from a worker + "
            "(snapshot - hash) pool lookup = " +
            num("%.2f", estimate_pct(s)) +
            "% of one inline task; the tick thread adds " +
            num("%.1f", s.tick_ns_per_record) +
            " ns per record off the submit path (" +
            num("%.2f", 100 * s.tick_ns_per_record / s.task_inline_ns) +
            "% of a task). The tick row: 10000 records per tick, the 10-s "
            "window holding the last 10 ticks; " +
            std::to_string(s.tick_remaps) + " re-maps among those ticks.";
    bare.columns = {"cost", "ns, Zipf ids", "ns, uniform ids"};
    bare.rows = {
            {"Monitor::record, outside thread", s.record_outside_ns, NAN},
            {"Monitor::record, from a worker", s.record_worker_ns, NAN},
            {"Monitor::tick, per drained record", s.tick_ns_per_record, NAN},
            {"Pool::set_mapping, no concurrent reader", s.set_mapping_ns, NAN}};
    for (const LookupResult& l : s.lookups) {
        bare.rows.push_back({l.name, l.zipf_ns, l.uniform_ns});
    }
    Plot costs{"(3) bare costs (lookups: Zipf ids)", "", "ns"};
    costs.kind = "bar";
    costs.yscale = "log";
    Series zipf{"ns", {}, {}};
    for (size_t i = 0; i < bare.rows.size(); i++) {
        costs.categories.push_back(bare.rows[i][0].s);
        zipf.x.push_back(double(i));
        zipf.y.push_back(bare.rows[i][1].x);
    }
    costs.series = {zipf};
    rep->tables.push_back(t);
    rep->tables.push_back(bare);
    rep->plots.push_back(reps);
    rep->plots.push_back(costs);
}

} // namespace

Report to_report(const Run& run) {
    Report rep;
    rep.benchmark = "mapping";
    rep.title = "bench_mapping: placement under drift, and what it costs";
    rep.run = run.info;
    rep.notes.push_back(
            std::string("consistency checks: ") +
            (run.consistent ? "passed" : "FAILED"));
    rep.targets = run.targets;
    add_drift(run, &rep);
    add_build(run, &rep);
    add_submit(run, &rep);
    return rep;
}

} // namespace mapping
} // namespace bench
