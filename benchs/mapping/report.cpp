#include "report.h"

#include "common/json_writer.h"

#include <faiss/ccd_scheduler/Monitor.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

namespace bench {
namespace mapping {

namespace {

using faiss::ccd::MonitorConfig;

constexpr double kBuildTargetMs = 5.0;
constexpr double kSubmitTargetPct = 3.0;

std::string fmt(const char* format, double v) {
    if (!std::isfinite(v)) {
        return "-";
    }
    char buf[64];
    snprintf(buf, sizeof(buf), format, v);
    return buf;
}

std::string mib(double bytes) {
    return fmt("%.1f", bytes / (1024.0 * 1024.0));
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

} // namespace

std::vector<Target> make_targets(const Run& run) {
    const BuildResult& b = run.build;
    std::vector<Target> t;
    const std::string size = std::to_string(b.num_ids) + " ids, " +
            std::to_string(b.num_ccds) + " CCDs";
    t.push_back(
            {"map build, map_hot_cold + MappingSnapshot, " + size +
                     ", wall-clock median",
             b.hot_cold.wall_ms + b.snapshot.wall_ms,
             kBuildTargetMs,
             "ms",
             "thread CPU " +
                     fmt("%.2f", b.hot_cold.cpu_ms + b.snapshot.cpu_ms) +
                     " ms"});
    t.push_back(
            {"map build, map_migration_aware + MappingSnapshot",
             b.migration_aware.wall_ms + b.snapshot.wall_ms,
             kBuildTargetMs,
             "ms",
             "thread CPU " +
                     fmt("%.2f", b.migration_aware.cpu_ms + b.snapshot.cpu_ms) +
                     " ms"});
    t.push_back(
            {"map build inside Monitor::tick (RemapRecord::build_ms, "
             "migration-aware, with a previous snapshot)",
             b.monitor_build_again_ms,
             kBuildTargetMs,
             "ms",
             "the whole tick(): " + fmt("%.2f", b.monitor_tick_again_ms) +
                     " ms"});
    for (const ScenarioResult& s : run.submit.scenarios) {
        if (s.name == "on" || s.name == "on+swaps") {
            t.push_back(
                    {"submit path, monitor " + s.name +
                             " vs off (end to end, median of paired "
                             "ratios)",
                     s.overhead_pct,
                     kSubmitTargetPct,
                     "%",
                     "95% interval [" + fmt("%+.2f", s.overhead_ci_pct[0]) +
                             ", " + fmt("%+.2f", s.overhead_ci_pct[1]) +
                             "] %; medians " + fmt("%.0f", s.median_ns) +
                             " vs " +
                             fmt("%.0f", run.submit.scenarios[0].median_ns) +
                             " ns/task"});
        }
    }
    t.push_back(
            {"submit path, estimate: record() in a worker + snapshot "
             "lookup extra, over one inline task",
             estimate_pct(run.submit),
             kSubmitTargetPct,
             "%",
             ""});
    const SubmitResult& s = run.submit;
    t.push_back(
            {"monitor's whole CPU per task, estimate: the above + the tick "
             "thread's drain per record (background, off the submit path)",
             estimate_pct(s) + 100 * s.tick_ns_per_record / s.task_inline_ns,
             kSubmitTargetPct,
             "%",
             "tick " + fmt("%.0f", s.tick_ns_per_record) +
                     " ns per record, task " + fmt("%.0f", s.task_inline_ns) +
                     " ns"});
    return t;
}

// ------------------------------------------------------------------ JSON

namespace {

void write_summary(JsonWriter& j, const char* name, const Summary& s) {
    j.key(name).begin_object();
    j.field("mean", s.mean).field("p95", s.p95).field("max", s.max);
    j.end_object();
}

} // namespace

std::string to_json(const Run& run) {
    JsonWriter j;
    j.begin_object();
    j.field("benchmark", "mapping");
    run.info.write_json(j);
    j.field("consistent", run.consistent);

    const Plan& p = run.plan;
    const WorkloadConfig& wc = p.drift.workload;
    j.key("plan").begin_object();
    j.field("topologies", p.topologies);
    j.field("tables", int(wc.tables)).field("lists", int(wc.lists));
    j.field("zipf_s", wc.zipf_s);
    j.field("drift_period_s", wc.drift_period_s);
    j.field("drift_rotate", int(wc.rotate));
    j.field("drift_shuffle_top", int(wc.shuffle_top));
    j.field("drift_shuffle_p", wc.shuffle_p);
    j.field("seconds", p.drift.seconds);
    j.field("accesses_per_s", p.drift.accesses_per_s);
    j.field("build_runs", p.build.runs);
    j.field("submit_rounds", p.submit.rounds);
    j.field("submit_queries_per_rep", p.submit.queries_per_rep);
    j.field("submit_tasks_per_query", p.submit.tasks_per_query);
    j.field("task_vectors", p.submit.vectors);
    j.field("task_dim", p.submit.dim);
    j.field("data_lists", p.submit.lists);
    j.field("tick_period_s", p.submit.tick_period_s);
    j.field("swap_period_s", p.submit.swap_period_s);
    j.end_object();

    j.key("drift").begin_array();
    for (const DriftResult& d : run.drift) {
        j.begin_object();
        j.field("spec", d.spec).field("topology", d.topology);
        j.field("num_ccds", d.num_ccds).field("seconds", d.seconds);
        j.field("accesses_per_s", d.accesses_per_s);
        j.field("steady_from_s", d.steady_from_s);
        j.field("consistent", d.consistent).field("wall_s", d.wall_s);
        j.field("drift_at_s", d.drift_at_s);
        j.field("bytes_per_s", d.bytes_per_s);
        j.key("series").begin_array();
        for (const PlacementSeries& s : d.series) {
            j.begin_object();
            j.field("name", s.name);
            write_summary(j, "all", s.all);
            write_summary(j, "steady", s.steady);
            j.field("imbalance", s.imbalance);
            j.end_object();
        }
        j.end_array();
        j.key("monitors").begin_array();
        for (const MonitorRun& m : d.monitors) {
            const MonitorSummary ms = summarize_monitor(m);
            j.begin_object();
            j.field("name", m.name);
            j.field("migration_aware", m.migration_aware);
            j.field("fast_window_s", m.fast_window_s);
            j.field("records", m.records);
            j.key("summary").begin_object();
            j.field("remaps", uint64_t(ms.remaps));
            j.field("moved_bytes_mean", ms.moved_mean);
            j.field("moved_bytes_max", ms.moved_max);
            j.field("moved_pct_of_window_mean", ms.pct_mean);
            j.field("moved_pct_of_window_max", ms.pct_max);
            j.field("ids_moved_mean", ms.ids_moved_mean);
            j.field("build_ms_median", ms.build_ms_median);
            j.field("tick_ms_median", ms.tick_ms_median);
            j.field("tick_ms_max", ms.tick_ms_max);
            j.end_object();
            j.key("remaps").begin_array();
            for (const RemapInfo& r : m.remaps) {
                j.begin_object();
                j.field("time", r.time);
                j.field("imbalance_before", r.imbalance_before);
                j.field("imbalance_after", r.imbalance_after);
                j.field("ids_placed", r.ids_placed);
                j.field("ids_moved", r.ids_moved);
                j.field("traffic_moved", r.traffic_moved);
                j.field("window_bytes", r.window_bytes);
                j.field("build_ms", r.build_ms);
                j.end_object();
            }
            j.end_array();
            j.field("window_imbalance", m.window_imbalance);
            j.field("tick_ms", m.tick_ms);
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();

    const BuildResult& b = run.build;
    j.key("build").begin_object();
    j.field("num_ids", b.num_ids).field("num_ccds", b.num_ccds);
    j.field("runs", b.runs);
    const std::pair<const char*, const Timing*> timings[] = {
            {"hot_cold", &b.hot_cold},
            {"migration_aware", &b.migration_aware},
            {"snapshot", &b.snapshot}};
    for (const auto& [name, timing] : timings) {
        j.key(name).begin_object();
        j.field("wall_ms", timing->wall_ms).field("cpu_ms", timing->cpu_ms);
        j.end_object();
    }
    j.field("monitor_build_first_ms", b.monitor_build_first_ms);
    j.field("monitor_tick_first_ms", b.monitor_tick_first_ms);
    j.field("monitor_build_again_ms", b.monitor_build_again_ms);
    j.field("monitor_tick_again_ms", b.monitor_tick_again_ms);
    j.field("window_add_ns", b.window_add_ns);
    j.field("loads_under_ns_per_id", b.loads_under_ns);
    j.field("window_ids", b.window_ids);
    j.field("hot_cold_imbalance", b.hot_cold_imbalance);
    j.field("migration_aware_imbalance", b.migration_aware_imbalance);
    j.field("moved_share_hot_cold", b.moved_share_hot_cold);
    j.field("moved_share_migration_aware", b.moved_share_migration_aware);
    j.end_object();

    const SubmitResult& s = run.submit;
    j.key("submit").begin_object();
    j.field("topology", s.topology).field("num_ccds", s.num_ccds);
    j.field("stream_imbalance", s.stream_imbalance);
    j.field("task_inline_ns", s.task_inline_ns);
    j.field("record_outside_ns", s.record_outside_ns);
    j.field("record_worker_ns", s.record_worker_ns);
    j.field("tick_ns_per_record", s.tick_ns_per_record);
    j.field("set_mapping_ns", s.set_mapping_ns);
    j.field("tick_remaps", s.tick_remaps);
    j.field("estimate_pct", estimate_pct(s));
    j.field("checks_ok", s.checks_ok);
    j.key("scenarios").begin_array();
    for (const ScenarioResult& sc : s.scenarios) {
        j.begin_object();
        j.field("name", sc.name);
        j.field("median_ns_per_task", sc.median_ns);
        j.field("overhead_pct", sc.overhead_pct);
        j.field("overhead_ci_pct",
                std::vector<double>{
                        sc.overhead_ci_pct[0],
                        sc.overhead_ci_pct[1]});
        j.field("swaps_per_s", sc.swaps_per_s);
        j.field("remaps_per_rep", sc.remaps_per_rep);
        j.field("ns_per_task", sc.ns_per_task);
        j.end_object();
    }
    j.end_array();
    j.key("lookups").begin_array();
    for (const LookupResult& l : s.lookups) {
        j.begin_object();
        j.field("name", l.name);
        j.field("zipf_ns", l.zipf_ns).field("uniform_ns", l.uniform_ns);
        j.end_object();
    }
    j.end_array();
    j.end_object();

    j.key("targets").begin_array();
    for (const Target& t : run.targets) {
        j.begin_object();
        j.field("name", t.name).field("value", t.value);
        j.field("limit", t.limit).field("unit", t.unit);
        j.field("note", t.note).field("met", t.met());
        j.end_object();
    }
    j.end_array();
    j.end_object();
    return j.str();
}

// -------------------------------------------------------------- markdown

std::string to_markdown(const Run& run) {
    std::ostringstream md;
    const Plan& p = run.plan;
    const WorkloadConfig& wc = p.drift.workload;
    md << "# bench_mapping\n\n";
    md << run.info.markdown();
    md << "- consistency checks: " << (run.consistent ? "passed" : "**FAILED**")
       << "\n\n";

    md << "## Targets\n\n";
    for (const Target& t : run.targets) {
        md << "- " << (t.met() ? "met" : "**MISSED**") << ": " << t.name << ": "
           << fmt("%.2f", t.value) << " " << t.unit
           << " (target <= " << fmt("%.0f", t.limit) << " " << t.unit << ")";
        if (!t.note.empty()) {
            md << "; " << t.note;
        }
        md << "\n";
    }
    md << "\n";

    md << "## (1) Drifting Zipf workload: per-CCD traffic imbalance\n\n";
    md << wc.tables << " tables x " << wc.lists << " lists; "
       << p.drift.accesses_per_s << " list scans per simulated second, Zipf("
       << wc.zipf_s << ") over a ranking that drifts every "
       << wc.drift_period_s << " s (rotates by " << wc.rotate
       << " ranks, then each of the top " << wc.shuffle_top
       << " ranks swaps with a random one with probability " << wc.shuffle_p
       << "); a scan moves list size x (code size + 8) bytes (sizes "
          "log-normal, median 128; code sizes 32/64/128 B). Imbalance of a "
          "second = max/mean of its per-CCD bytes under the map in force. "
          "round-robin = global list index (table x 8192 + list) mod nCCD. "
          "paper / migration-aware = Monitor (MonitorConfig defaults: fast "
          "window 10 s, threshold 1.2) with migration_aware false / true, "
          "ticked once per simulated second; the \"(2 s)\" rows are the same "
          "monitors with a 2-s fast window (a what-if, not a default). "
          "oracle = map_hot_cold on the "
          "second's own traffic; lower-bound = max(1, hottest id's bytes / "
          "mean CCD bytes). Steady = seconds >= the fast window.\n\n";
    for (const DriftResult& d : run.drift) {
        md << "### " << d.spec << ": " << d.topology << "\n\n";
        md << "| placement | steady mean | P95 | max | all-seconds mean |\n";
        md << "|---|---:|---:|---:|---:|\n";
        for (const PlacementSeries& s : d.series) {
            md << "| " << s.name << " | " << fmt("%.3f", s.steady.mean) << " | "
               << fmt("%.3f", s.steady.p95) << " | "
               << fmt("%.3f", s.steady.max) << " | " << fmt("%.3f", s.all.mean)
               << " |\n";
        }
        md << "\n| monitor | re-maps | ids moved / re-map | moved / re-map, "
              "mean MiB | max MiB | % of window, mean | max | build ms "
              "(median) | tick ms median | max |\n";
        md << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        for (const MonitorRun& m : d.monitors) {
            const MonitorSummary s = summarize_monitor(m);
            md << "| " << m.name << " | " << s.remaps << " | "
               << fmt("%.0f", s.ids_moved_mean) << " | " << mib(s.moved_mean)
               << " | " << mib(s.moved_max) << " | " << fmt("%.1f", s.pct_mean)
               << " | " << fmt("%.1f", s.pct_max) << " | "
               << fmt("%.2f", s.build_ms_median) << " | "
               << fmt("%.2f", s.tick_ms_median) << " | "
               << fmt("%.2f", s.tick_ms_max) << " |\n";
        }
        double mean_bytes = 0;
        for (uint64_t b : d.bytes_per_s) {
            mean_bytes += double(b);
        }
        mean_bytes /= std::max<size_t>(1, d.bytes_per_s.size());
        // Seconds in which no map can get under the re-map threshold: the
        // hottest id alone carries more than threshold x a CCD's share.
        int unfixable = 0;
        for (const PlacementSeries& s : d.series) {
            if (s.name == "lower-bound") {
                for (double v : s.imbalance) {
                    unfixable += v > MonitorConfig().imbalance_threshold;
                }
            }
        }
        md << "\nOne simulated second carries " << mib(mean_bytes)
           << " MiB on average. Seconds whose lower bound is above the "
              "re-map threshold ("
           << MonitorConfig().imbalance_threshold
           << "; no map can satisfy it): " << unfixable << " of " << d.seconds
           << ". Simulated " << d.seconds << " s in " << fmt("%.1f", d.wall_s)
           << " s.\n\n";
    }

    const BuildResult& b = run.build;
    md << "## (2) Map build time\n\n";
    md << b.num_ids << " ids, " << b.num_ccds
       << " CCDs, expected Zipf traffic after one drift step; median of "
       << b.runs
       << " runs. The migration-aware map starts from the "
          "hot-cold map of the traffic before the drift step. Monitor rows: "
          "one tick() that re-maps every id from the hash map (every id "
          "recorded once).\n\n";
    md << "| step | wall ms | thread CPU ms |\n|---|---:|---:|\n";
    md << "| map_hot_cold | " << fmt("%.2f", b.hot_cold.wall_ms) << " | "
       << fmt("%.2f", b.hot_cold.cpu_ms) << " |\n";
    md << "| map_migration_aware | " << fmt("%.2f", b.migration_aware.wall_ms)
       << " | " << fmt("%.2f", b.migration_aware.cpu_ms) << " |\n";
    md << "| MappingSnapshot (" << b.num_ids << " ids) | "
       << fmt("%.2f", b.snapshot.wall_ms) << " | "
       << fmt("%.2f", b.snapshot.cpu_ms) << " |\n";
    md << "| Monitor re-map, no previous snapshot (build_ms) | "
       << fmt("%.2f", b.monitor_build_first_ms) << " | - |\n";
    md << "| ... the tick() that re-maps, drain included | "
       << fmt("%.2f", b.monitor_tick_first_ms) << " | - |\n";
    md << "| Monitor re-map, with a previous snapshot (build_ms) | "
       << fmt("%.2f", b.monitor_build_again_ms) << " | - |\n";
    md << "| ... the tick() that re-maps, drain included | "
       << fmt("%.2f", b.monitor_tick_again_ms) << " | - |\n\n";
    md << "Per-tick costs that do not depend on re-mapping (thread CPU "
          "time): TrafficWindow::add "
       << fmt("%.0f", b.window_add_ns)
       << " ns per record (tick() makes two per record drained: fast and "
          "slow window); the placement's imbalance over the fast window "
          "(Monitor::loads_under, run by every tick() and every stats()) "
       << fmt("%.0f", b.loads_under_ns) << " ns per id, "
       << fmt("%.2f", 1e-6 * b.loads_under_ns * double(b.window_ids))
       << " ms for the " << b.window_ids
       << " ids that 10 s of 40000 scans/s leave in the window.\n\n";
    md << "Map quality on that traffic: hot-cold imbalance "
       << fmt("%.3f", b.hot_cold_imbalance) << ", moving "
       << fmt("%.1f", 100 * b.moved_share_hot_cold)
       << "% of the traffic; migration-aware "
       << fmt("%.3f", b.migration_aware_imbalance) << ", moving "
       << fmt("%.1f", 100 * b.moved_share_migration_aware) << "%.\n\n";

    const SubmitResult& s = run.submit;
    md << "## (3) Submit path: monitor off / on / on + snapshot swaps\n\n";
    md << "Pool: " << s.topology << ", ccd policy. A task scans "
       << p.submit.vectors << " vectors x " << p.submit.dim
       << " floats (L2 to one query, minimum kept) of one of " << p.submit.lists
       << " lists; " << p.submit.tasks_per_query
       << " tasks per TaskGroup (one query), " << p.submit.queries_per_rep
       << " queries per rep from one client thread; reps interleaved "
          "off/on/on+swaps/swaps/wakeups for "
       << p.submit.rounds << " rounds. on: each task calls Monitor::record, "
       << "tick every " << fmt("%.0f", 1e3 * p.submit.tick_period_s)
       << " ms; on+swaps: also set_mapping every "
       << fmt("%.0f", 1e3 * p.submit.swap_period_s)
       << " ms from another thread, alternating a balanced map and its "
          "mirror (every id moves); swaps: that thread without the monitor; "
          "wakeups: a thread that wakes as often and publishes nothing (a "
          "control: the price of a wake-up on busy cores). "
          "ns/task = rep wall time / tasks (2 workers in parallel). "
          "Overhead = median over rounds of (scenario / off) - 1, with a "
          "distribution-free ~95% interval of that median; each round starts "
          "one scenario later than the one before.\n\n";
    md << "One task run inline (no pool; thread CPU time, median over "
          "rounds): "
       << fmt("%.0f", s.task_inline_ns)
       << " ns. Imbalance of one rep's tasks under the map every rep "
          "starts from: "
       << fmt("%.3f", s.stream_imbalance) << ".\n\n";
    md << "| scenario | median ns/task | overhead vs off | ~95% interval | "
          "swaps/s | monitor re-maps/rep |\n"
          "|---|---:|---:|---:|---:|---:|\n";
    for (const ScenarioResult& sc : s.scenarios) {
        const bool off = sc.name == "off";
        md << "| " << sc.name << " | " << fmt("%.0f", sc.median_ns) << " | "
           << (off ? "-" : fmt("%+.2f%%", sc.overhead_pct)) << " | "
           << (off ? "-"
                   : fmt("%+.1f", sc.overhead_ci_pct[0]) + " .. " +
                               fmt("%+.1f%%", sc.overhead_ci_pct[1]))
           << " | " << fmt("%.0f", sc.swaps_per_s) << " | "
           << fmt("%.2f", sc.remaps_per_rep) << " |\n";
    }
    md << "\nBare costs below: the calling thread's CPU time, medians.\n";
    md << "\n| bare cost | ns |\n|---|---:|\n";
    md << "| Monitor::record, outside thread | "
       << fmt("%.1f", s.record_outside_ns) << " |\n";
    md << "| Monitor::record, from a worker | "
       << fmt("%.1f", s.record_worker_ns) << " |\n";
    md << "| Monitor::tick, per drained record (background; 10000 records "
          "per tick, the 10-s window holding the last 10 ticks; "
       << s.tick_remaps << " re-maps among those ticks) | "
       << fmt("%.1f", s.tick_ns_per_record) << " |\n";
    md << "| Pool::set_mapping, no concurrent reader | "
       << fmt("%.0f", s.set_mapping_ns) << " |\n";
    md << "\n| lookup | ns, Zipf ids | ns, uniform ids |\n|---|---:|---:|\n";
    for (const LookupResult& l : s.lookups) {
        md << "| " << l.name << " | " << fmt("%.1f", l.zipf_ns) << " | "
           << fmt("%.1f", l.uniform_ns) << " |\n";
    }
    md << "\nEstimated recording cost per task: record() from a worker + "
          "(snapshot - hash) pool lookup = "
       << fmt("%.2f", estimate_pct(s))
       << "% of one inline task; the tick thread adds "
       << fmt("%.1f", s.tick_ns_per_record)
       << " ns per record off the submit path ("
       << fmt("%.2f", 100 * s.tick_ns_per_record / s.task_inline_ns)
       << "% of a task, on a core the workers share here).\n";
    return md.str();
}

} // namespace mapping
} // namespace bench
