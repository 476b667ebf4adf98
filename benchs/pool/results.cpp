#include "results.h"

#include "common/json_writer.h"

#include <cstdio>
#include <sstream>

namespace bench {

namespace {

void write_counters(JsonWriter& j, const PoolCounters& c) {
    if (!c.present) {
        return;
    }
    const faiss::ccd::PoolStats& s = c.delta;
    j.key("pool_stats").begin_object();
    j.field("tasks_run", s.tasks_run());
    j.field("local_pops", s.local_pops());
    j.field("intra_ccd_steals", s.intra_ccd_steals());
    j.field("cross_ccd_steals", s.cross_ccd_steals());
    j.field("cross_ccd_steal_ratio", s.cross_ccd_steal_ratio());
    j.field("parks", s.parks());
    j.field("tasks_run_per_ccd", s.tasks_run_per_ccd());
    j.end_object();
}

std::string fmt(const char* format, double v) {
    char buf[64];
    snprintf(buf, sizeof(buf), format, v);
    return buf;
}

/// mtasks: tasks/s as millions, 2 decimals.
std::string mtasks(double rate) {
    return fmt("%.2f", rate * 1e-6);
}

std::string us(double v) {
    return v < 10 ? fmt("%.2f", v) : fmt("%.1f", v);
}

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

std::string ratio(const TreeRow* a, const TreeRow* b) {
    if (a == nullptr || b == nullptr || b->median_rate <= 0) {
        return "-";
    }
    return fmt("%.2fx", a->median_rate / b->median_rate);
}

} // namespace

std::string to_json(const Results& r) {
    JsonWriter j;
    j.begin_object();
    j.field("benchmark", "pool");
    r.run.write_json(j);

    j.key("plan").begin_object();
    j.field("tasks_per_submitter", r.tasks_per_submitter);
    j.field("max_submitters", r.max_submitters);
    j.field("throughput_reps", r.throughput_reps);
    j.field("latency_parked_samples", r.parked_samples);
    j.field("latency_spinning_samples", r.spinning_samples);
    j.field("latency_parked_gap_us", r.parked_gap_us);
    j.field("tree_reps", r.tree_reps);
    j.end_object();

    j.key("contenders").begin_object();
    for (size_t i = 0; i < r.contenders.size(); i++) {
        j.field(r.contenders[i], r.contender_descriptions[i]);
    }
    j.end_object();

    j.key("throughput").begin_array();
    for (const ThroughputRow& row : r.throughput) {
        j.begin_object();
        j.field("contender", row.contender);
        j.field("submitters", row.submitters);
        j.field("tasks", row.tasks);
        j.field("median_tasks_per_s", row.median_rate);
        j.field("best_tasks_per_s", row.best_rate);
        j.field("tasks_per_s", row.rates);
        write_counters(j, row.counters);
        j.end_object();
    }
    j.end_array();

    j.key("latency").begin_array();
    for (const LatencyRow& row : r.latency) {
        j.begin_object();
        j.field("contender", row.contender);
        j.field("mode", row.mode);
        j.field("samples", row.samples);
        j.field("p50_us", row.p50_us);
        j.field("p99_us", row.p99_us);
        j.field("p999_us", row.p999_us);
        j.field("mean_us", row.mean_us);
        j.field("max_us", row.max_us);
        write_counters(j, row.counters);
        j.end_object();
    }
    j.end_array();
    j.field("latency_skipped", r.latency_skipped);
    j.field("latency_references", r.latency_references);

    j.key("tree").begin_array();
    for (const TreeRow& row : r.tree) {
        const TreeRow* mutex = find_tree(r, "mutex-queue", row.target_tasks);
        const TreeRow* tbb = find_tree(r, "tbb", row.target_tasks);
        j.begin_object();
        j.field("contender", row.contender);
        j.field("target_tasks", row.target_tasks);
        j.field("tasks", row.tasks);
        j.field("max_depth", row.max_depth);
        j.field("median_tasks_per_s", row.median_rate);
        j.field("best_tasks_per_s", row.best_rate);
        j.field("tasks_per_s", row.rates);
        j.field("ratio_vs_mutex_queue",
                mutex ? row.median_rate / mutex->median_rate : 0.0);
        j.field("ratio_vs_tbb", tbb ? row.median_rate / tbb->median_rate : 0.0);
        write_counters(j, row.counters);
        j.end_object();
    }
    j.end_array();

    j.key("targets").begin_array();
    for (const Target& t : r.targets) {
        j.begin_object();
        j.field("name", t.name);
        j.field("met", t.met);
        j.field("measured", t.measured);
        j.field("why", t.why);
        j.end_object();
    }
    j.end_array();
    j.field("exactly_once_failures", r.failures);
    j.end_object();
    return j.str();
}

std::string to_markdown(const Results& r) {
    std::ostringstream md;
    md << "# bench_pool\n\n";
    md << r.run.markdown();
    md << "- exactly-once check: "
       << (r.failures.empty()
                   ? "passed for every run"
                   : std::to_string(r.failures.size()) + " FAILURES (see JSON)")
       << "\n\n";

    md << "## (a) Independent tiny tasks: throughput, Mtasks/s\n\n";
    md << "T threads each submit " << r.tasks_per_submitter
       << " tasks and wait for them; median of " << r.throughput_reps
       << " reps.\n\n";
    md << "| contender |";
    for (int t = 1; t <= r.max_submitters; t++) {
        md << " T=" << t << " |";
    }
    md << "\n|---|";
    for (int t = 1; t <= r.max_submitters; t++) {
        md << "---:|";
    }
    md << "\n";
    for (const std::string& c : r.contenders) {
        md << "| " << c << " |";
        for (const ThroughputRow& row : r.throughput) {
            if (row.contender == c) {
                md << " " << mtasks(row.median_rate) << " |";
            }
        }
        md << "\n";
    }

    md << "\n## (a) Submit-to-start latency, us\n\n";
    md << "parked: " << r.parked_samples << " samples, "
       << r.parked_gap_us / 1000.0
       << " ms apart (workers asleep); spinning: " << r.spinning_samples
       << " samples, each submitted as soon as the previous one started.\n\n";
    md << "| contender | parked P50 | P99 | P999 | spinning P50 | P99 | P999 "
          "|\n";
    md << "|---|---:|---:|---:|---:|---:|---:|\n";
    std::vector<std::string> latency_rows = r.contenders;
    latency_rows.insert(
            latency_rows.end(),
            r.latency_references.begin(),
            r.latency_references.end());
    for (const std::string& c : latency_rows) {
        const LatencyRow* p = find_latency(r, c, "parked");
        const LatencyRow* s = find_latency(r, c, "spinning");
        if (p == nullptr || s == nullptr) {
            continue;
        }
        md << "| " << c << " | " << us(p->p50_us) << " | " << us(p->p99_us)
           << " | " << us(p->p999_us) << " | " << us(s->p50_us) << " | "
           << us(s->p99_us) << " | " << us(s->p999_us) << " |\n";
    }
    for (const std::string& c : r.latency_references) {
        md << "\n"
           << c
           << " is a reference, not a contender: the same pool without "
              "pinning its workers.\n";
    }
    for (const std::string& s : r.latency_skipped) {
        md << "\nNot measured: " << s << "\n";
    }

    md << "\n## (b) Uneven fork-join tree\n\n";
    md << "Every node is a task; 0-4 children and 0-200 work rounds per node, "
          "chosen by hash. Median Mtasks/s (and ratios of medians) over "
          "the reps, and the best rep; serial = plain recursion on one "
          "thread, no tasks.\n\n";
    md << "| tasks | contender | Mtasks/s | best | vs mutex-queue | vs tbb | "
          "vs serial |\n";
    md << "|---:|---|---:|---:|---:|---:|---:|\n";
    for (const TreeRow& row : r.tree) {
        md << "| " << row.tasks << " | " << row.contender << " | "
           << mtasks(row.median_rate) << " | " << mtasks(row.best_rate) << " | "
           << ratio(&row, find_tree(r, "mutex-queue", row.target_tasks))
           << " | " << ratio(&row, find_tree(r, "tbb", row.target_tasks))
           << " | " << ratio(&row, find_tree(r, "serial", row.target_tasks))
           << " |\n";
    }

    md << "\n## Pool counters (measured reps)\n\n";
    md << "| scenario | contender | tasks run | local pops | intra-CCD "
          "steals | cross-CCD steals | parks |\n";
    md << "|---|---|---:|---:|---:|---:|---:|\n";
    auto counters_row = [&md](const std::string& scenario,
                              const std::string& contender,
                              const PoolCounters& c) {
        if (!c.present) {
            return;
        }
        md << "| " << scenario << " | " << contender << " | "
           << c.delta.tasks_run() << " | " << c.delta.local_pops() << " | "
           << c.delta.intra_ccd_steals() << " | " << c.delta.cross_ccd_steals()
           << " | " << c.delta.parks() << " |\n";
    };
    for (const ThroughputRow& row : r.throughput) {
        counters_row(
                "(a) T=" + std::to_string(row.submitters),
                row.contender,
                row.counters);
    }
    for (const LatencyRow& row : r.latency) {
        counters_row("latency " + row.mode, row.contender, row.counters);
    }
    for (const TreeRow& row : r.tree) {
        counters_row(
                "(b) " + std::to_string(row.tasks),
                row.contender,
                row.counters);
    }

    md << "\n## Targets\n\n";
    for (const Target& t : r.targets) {
        md << "- **" << (t.met ? "met" : "MISSED") << "**: " << t.name << ": "
           << t.measured << "\n";
        if (!t.met && !t.why.empty()) {
            md << "  - " << t.why << "\n";
        }
    }

    md << "\n## Contenders\n\n";
    for (size_t i = 0; i < r.contenders.size(); i++) {
        md << "- " << r.contenders[i] << ": " << r.contender_descriptions[i]
           << "\n";
    }
    return md.str();
}

} // namespace bench
