#include "ivf_report.h"

#include "common/json_writer.h"
#include "common/run_info.h"
#include "ivf_report_util.h"

#include <algorithm>
#include <cstdio>

namespace bench {
namespace ivf {

using namespace report_util;

void ScenarioRow::finalize() {
    std::vector<double> q, a, b, c, own, other;
    has_pool = false;
    tasks = local_pops = intra_steals = cross_steals = parks = 0;
    tasks_per_ccd.clear();
    size_t queries = 0;
    for (const RunResult& r : rounds) {
        q.push_back(r.qps);
        a.push_back(r.latency.p50);
        b.push_back(r.latency.p99);
        c.push_back(r.latency.p999);
        own.push_back(r.own_cpu);
        other.push_back(r.other_cpu);
        queries += r.queries;
        if (r.has_pool) {
            has_pool = true;
            tasks += r.pool_delta.tasks_run();
            local_pops += r.pool_delta.local_pops();
            intra_steals += r.pool_delta.intra_ccd_steals();
            cross_steals += r.pool_delta.cross_ccd_steals();
            parks += r.pool_delta.parks();
            const std::vector<uint64_t> per = r.pool_delta.tasks_run_per_ccd();
            tasks_per_ccd.resize(per.size(), 0);
            for (size_t i = 0; i < per.size(); i++) {
                tasks_per_ccd[i] += per[i];
            }
        }
    }
    qps = median(q);
    p50 = median(a);
    p99 = median(b);
    p999 = median(c);
    own_cpu = median(own);
    other_cpu = median(other);
    const uint64_t steals = intra_steals + cross_steals;
    cross_steal_ratio = steals ? double(cross_steals) / double(steals) : 0;
    tasks_per_query = queries ? double(tasks) / double(queries) : 0;
}

const ScenarioRow* DatasetResults::row(
        const std::string& scenario,
        const std::string& contender) const {
    for (const ScenarioRow& r : rows) {
        if (r.scenario == scenario && r.contender == contender) {
            return &r;
        }
    }
    return nullptr;
}

std::string to_json(const DatasetResults& r) {
    JsonWriter j;
    j.begin_object();
    j.field("benchmark", "ivf");
    j.field("dataset", r.dataset);
    r.run.write_json(j);
    j.field("max_workers_per_ccd", r.max_workers_per_ccd);

    j.key("data").begin_object();
    j.field("description", r.description);
    j.field("d", r.d);
    j.field("nb", uint64_t(r.nb));
    j.field("nlist", uint64_t(r.nlist));
    j.field("nprobe", uint64_t(r.nprobe));
    j.field("k", r.k);
    j.field("nq_loaded", uint64_t(r.nq_loaded));
    j.field("index_from_cache", r.index_from_cache);
    j.field("cache_file", r.cache_file);
    j.field("build_seconds", r.build_seconds);
    j.field("ground_truth_seconds", r.gt_seconds);
    j.key("lists").begin_object();
    j.field("empty", uint64_t(r.lists.empty));
    j.field("avg", r.lists.avg);
    j.field("max", uint64_t(r.lists.max));
    j.field("max_over_avg", r.lists.max_over_avg);
    j.field("top1pct_share", r.lists.top1pct_share);
    j.end_object();
    j.field("recall10_all", r.recall10_all);
    j.field("recall10_all_queries", uint64_t(r.recall10_all_queries));
    j.end_object();

    j.key("plan").begin_object();
    j.field("rounds", r.rounds);
    j.field("single_blocks", r.single_blocks);
    j.field("clients_blocks", r.clients_blocks);
    j.field("noisy_share", r.noisy_share);
    j.field("max_reruns", r.max_reruns);
    j.field("rerun_budget_s", r.rerun_budget_s);
    j.field("rerun_seconds", r.rerun_seconds);
    j.field("nclients", r.nclients);
    j.field("single_nq", uint64_t(r.single_nq));
    j.field("clients_nq", uint64_t(r.clients_nq));
    j.field("batch_nq", uint64_t(r.batch_nq));
    j.end_object();

    j.field("contenders", r.contenders);
    j.field("contender_descriptions", r.contender_descriptions);

    j.key("scenarios").begin_array();
    for (const ScenarioRow& row : r.rows) {
        j.begin_object();
        j.field("scenario", row.scenario);
        j.field("contender", row.contender);
        j.field("qps", row.qps);
        j.field("p50_ms", row.p50);
        j.field("p99_ms", row.p99);
        j.field("p999_ms", row.p999);
        j.field("samples_per_round",
                uint64_t(
                        row.rounds.empty() ? 0
                                           : row.rounds[0].latency.samples));
        j.field("own_cpu_share", row.own_cpu);
        j.field("other_cpu_share", row.other_cpu);
        j.field("reruns", row.reruns);
        j.field("recall10", row.recall10);
        j.field("recall_queries", uint64_t(row.recall_queries));
        if (row.compared) {
            j.key("vs_stock_pm0").begin_object();
            j.field("compared", uint64_t(row.mismatch.compared));
            j.field("distance_mismatch_queries",
                    uint64_t(row.mismatch.distance_queries));
            j.field("label_mismatch_queries",
                    uint64_t(row.mismatch.label_queries));
            j.field("examples", row.mismatch.examples);
            j.end_object();
        }
        if (row.has_pool) {
            j.key("pool").begin_object();
            j.field("tasks", row.tasks);
            j.field("tasks_per_query", row.tasks_per_query);
            j.field("local_pops", row.local_pops);
            j.field("intra_ccd_steals", row.intra_steals);
            j.field("cross_ccd_steals", row.cross_steals);
            j.field("cross_ccd_steal_ratio", row.cross_steal_ratio);
            j.field("parks", row.parks);
            j.field("tasks_per_ccd", row.tasks_per_ccd);
            j.end_object();
        }
        j.key("rounds").begin_array();
        for (const RunResult& rr : row.rounds) {
            j.begin_object();
            j.field("seconds", rr.seconds);
            j.field("qps", rr.qps);
            j.field("own_cpu_share", rr.own_cpu);
            j.field("other_cpu_share", rr.other_cpu);
            if (rr.latency.samples > 0) {
                j.field("p50_ms", rr.latency.p50);
                j.field("p99_ms", rr.latency.p99);
                j.field("p999_ms", rr.latency.p999);
                j.field("mean_ms", rr.latency.mean);
                j.field("max_ms", rr.latency.max);
            }
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();

    if (r.has_split) {
        const SplitAnalysis& a = r.split;
        j.key("split").begin_object();
        j.field("queries", uint64_t(a.queries));
        j.field("workers", a.workers);
        j.field("split_threshold", a.split_threshold);
        j.field("chunk", a.chunk);
        j.field("lists_per_query", a.lists_per_query);
        j.field("tasks_per_query", a.tasks_per_query);
        j.field("split_lists_per_query", a.split_lists_per_query);
        j.field("codes_per_query", a.codes_per_query);
        j.field("largest_task_share_nosplit", a.largest_task_share_nosplit);
        j.field("largest_task_share_split", a.largest_task_share_split);
        j.field("ideal_speedup_nosplit", a.ideal_speedup_nosplit);
        j.field("ideal_speedup_split", a.ideal_speedup_split);
        j.end_object();
    }

    if (r.has_scan_cost) {
        const ScanCost& c = r.scan_cost;
        j.key("scan_cost").begin_object();
        j.field("queries", uint64_t(c.queries));
        j.field("k", c.k);
        j.field("variants", c.variants);
        j.field("ms_per_query", c.ms_per_query);
        j.field("heaps_per_query", c.tasks_per_query);
        j.field("distance_mismatch_queries", uint64_t(c.distance_mismatches));
        j.field("coarse_cpu_ms_per_query_single", c.coarse_ms_single);
        j.field("coarse_cpu_ms_per_query_batch", c.coarse_ms_batch);
        j.field("coarse_batch_queries", uint64_t(c.coarse_batch_nq));
        j.end_object();
    }

    j.key("targets").begin_array();
    for (const TargetCheck& t : r.targets) {
        j.begin_object();
        j.field("name", t.name);
        j.field("measured", t.measured);
        j.field("met", t.met);
        j.field("why", t.why);
        j.end_object();
    }
    j.end_array();
    j.field("notes", r.notes);
    j.end_object();
    return j.str();
}

namespace {

/// cpu_cell: "ours% / others%" of the machine during the run (medians).
std::string cpu_cell(const ScenarioRow& row) {
    if (row.own_cpu < 0) {
        return "?";
    }
    return fmt(
            "%.0f%% / %s%s",
            100 * row.own_cpu,
            row.other_cpu < 0 ? "?"
                              : fmt("%.0f%%", 100 * row.other_cpu).c_str(),
            row.reruns > 0 ? fmt(" (%d rerun)", row.reruns).c_str() : "");
}

} // namespace

std::string to_markdown(const DatasetResults& r) {
    std::string m;
    m += "# bench_ivf: " + r.dataset + "\n\n";
    m += r.run.markdown();
    m += "- data: " + r.description + "\n";
    m +=
            fmt("- index: IVF%zu,Flat over %zu x %d, nprobe %zu, k %d; lists: "
                "avg %.0f, max %zu (%.1fx avg), largest 1%% hold %.0f%% of "
                "codes, %zu empty\n",
                r.nlist,
                r.nb,
                r.d,
                r.nprobe,
                r.k,
                r.lists.avg,
                r.lists.max,
                r.lists.max_over_avg,
                100 * r.lists.top1pct_share,
                r.lists.empty);
    m += fmt(
            "- index %s in %.1f s (`%s`)\n",
            r.index_from_cache ? "loaded from the cache" : "built and cached",
            r.build_seconds,
            r.cache_file.c_str());
    if (r.recall10_all >= 0) {
        m +=
                fmt("- recall@10 against exact search (IndexFlatL2), "
                    "stock-pm0 over %zu queries: %.4f\n",
                    r.recall10_all_queries,
                    r.recall10_all);
    }
    m +=
            fmt("- plan: %d round%s per scenario; in a round the contenders "
                "take turns block by block (single: %d blocks, clients: %d, "
                "batch: 1), each block starting with another contender, "
                "backwards in odd rounds; tables give the median of the "
                "rounds. Samples per round: single %zu, %d clients %zu, batch "
                "%zu queries. \"CPU ours / others\": shares of the whole "
                "machine used by this process and by everything else during "
                "the measured runs (getrusage, /proc/stat): others' share is "
                "the noise.\n",
                r.rounds,
                r.rounds == 1 ? "" : "s",
                r.single_blocks,
                r.clients_blocks,
                r.single_nq,
                r.nclients,
                r.clients_nq,
                r.batch_nq);
    int reruns = 0;
    for (const ScenarioRow& row : r.rows) {
        reruns += row.reruns;
    }
    if (r.max_reruns > 0) {
        m +=
                fmt("- noise: a block of 0.5 s or more during which others "
                    "took over %.0f%% of the machine was measured again (at "
                    "most %d times, %.0f s per data set): %d blocks, %.0f s "
                    "discarded.\n",
                    100 * r.noisy_share,
                    r.max_reruns,
                    r.rerun_budget_s,
                    reruns,
                    r.rerun_seconds);
    }
    m += "\n";
    m += "Contenders:\n";
    for (size_t i = 0; i < r.contenders.size(); i++) {
        m += "- `" + r.contenders[i] + "`: " + r.contender_descriptions[i] +
                "\n";
    }

    const Best s50 = best_stock(r, "single", &ScenarioRow::p50, false);
    const Best s999 = best_stock(r, "single", &ScenarioRow::p999, false);
    m +=
            fmt("\n## Single client, single queries (%zu per round)\n\n",
                r.single_nq);
    m += "| contender | QPS | P50 ms | P99 ms | P999 ms | P50 / best stock "
         "| P999 / best stock | recall@10 | CPU ours / others |\n";
    m += "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const ScenarioRow& row : r.rows) {
        if (row.scenario == "single") {
            m +=
                    fmt("| %s | %.1f | %.3f | %.3f | %.2f | %.2f | %.2f | %.4f "
                        "| %s |\n",
                        row.contender.c_str(),
                        row.qps,
                        row.p50,
                        row.p99,
                        row.p999,
                        ratio(row.p50, s50.value),
                        ratio(row.p999, s999.value),
                        row.recall10,
                        cpu_cell(row).c_str());
        }
    }

    const Best cq = best_stock(r, "clients", &ScenarioRow::qps, true);
    const Best c50 = best_stock(r, "clients", &ScenarioRow::p50, false);
    const Best c999 = best_stock(r, "clients", &ScenarioRow::p999, false);
    m +=
            fmt("\n## %d clients, single queries, closed loop (%zu per "
                "round)\n\n",
                r.nclients,
                r.clients_nq);
    m += "| contender | QPS | QPS / best stock | QPS / own batch | P50 ms | "
         "P99 ms | P999 ms | P50 / best stock | P999 / best stock | CPU "
         "ours / others |\n";
    m += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const ScenarioRow& row : r.rows) {
        if (row.scenario == "clients") {
            const ScenarioRow* b = r.row("batch", row.contender);
            m +=
                    fmt("| %s | %.1f | %.2f | %s | %.2f | %.2f | %.2f | %.2f "
                        "| %.2f | %s |\n",
                        row.contender.c_str(),
                        row.qps,
                        ratio(row.qps, cq.value),
                        b ? fmt("%.2f", ratio(row.qps, b->qps)).c_str() : "-",
                        row.p50,
                        row.p99,
                        row.p999,
                        ratio(row.p50, c50.value),
                        ratio(row.p999, c999.value),
                        cpu_cell(row).c_str());
        }
    }

    const Best bq = best_stock(r, "batch", &ScenarioRow::qps, true);
    m += fmt("\n## One batch of %zu queries\n\n", r.batch_nq);
    m += "| contender | QPS | QPS / best stock | seconds (median) | "
         "recall@10 | CPU ours / others |\n|---|---:|---:|---:|---:|---:|\n";
    for (const ScenarioRow& row : r.rows) {
        if (row.scenario == "batch") {
            m +=
                    fmt("| %s | %.1f | %.2f | %.2f | %.4f | %s |\n",
                        row.contender.c_str(),
                        row.qps,
                        ratio(row.qps, bq.value),
                        ratio(double(r.batch_nq), row.qps),
                        row.recall10,
                        cpu_cell(row).c_str());
        }
    }

    m += "\n## Pool counters (summed over rounds)\n\n";
    m += "| scenario | contender | tasks / query | intra-CCD steals | "
         "cross-CCD steals | cross ratio | parks | tasks per CCD |\n";
    m += "|---|---|---:|---:|---:|---:|---:|---|\n";
    for (const ScenarioRow& row : r.rows) {
        if (row.has_pool) {
            std::string per;
            for (uint64_t t : row.tasks_per_ccd) {
                per += (per.empty() ? "" : " / ") + std::to_string(t);
            }
            m +=
                    fmt("| %s | %s | %.1f | %llu | %llu | %.0f%% | %llu | %s "
                        "|\n",
                        row.scenario.c_str(),
                        row.contender.c_str(),
                        row.tasks_per_query,
                        (unsigned long long)row.intra_steals,
                        (unsigned long long)row.cross_steals,
                        100 * row.cross_steal_ratio,
                        (unsigned long long)row.parks,
                        per.c_str());
        }
    }

    if (r.has_scan_cost) {
        const ScanCost& c = r.scan_cost;
        m +=
                fmt("\n## Scan cost on one thread (%zu queries, k %d; "
                    "ivf_scan_cost.h)\n\n",
                    c.queries,
                    c.k);
        m += "| variant | ms per query | vs one_heap | heaps merged per "
             "query |\n|---|---:|---:|---:|\n";
        for (size_t i = 0; i < c.variants.size(); i++) {
            m +=
                    fmt("| %s | %.3f | %.2f | %.1f |\n",
                        c.variants[i].c_str(),
                        c.ms_per_query[i],
                        ratio(c.ms_per_query[i], c.ms_per_query[0]),
                        c.tasks_per_query[i]);
        }
        m +=
                fmt("\nCoarse quantizer, process CPU per query: %.3f ms one "
                    "query per call (%zu single queries), %.3f ms with %zu in "
                    "one call (a batch: BLAS).\n",
                    c.coarse_ms_single,
                    c.queries,
                    c.coarse_ms_batch,
                    c.coarse_batch_nq);
    }

    m += "\n## Results against stock-pm0 (same scenario, same queries)\n\n";
    for (const ScenarioRow& row : r.rows) {
        if (!row.compared) {
            continue;
        }
        m +=
                fmt("- %s %s: %zu queries, %zu with a different distance, %zu "
                    "with a different label%s\n",
                    row.scenario.c_str(),
                    row.contender.c_str(),
                    row.mismatch.compared,
                    row.mismatch.distance_queries,
                    row.mismatch.label_queries,
                    row.mismatch.label_queries > row.mismatch.distance_queries
                            ? " (ties or order among equal distances)"
                            : "");
        for (const std::string& e : row.mismatch.examples) {
            m += "  - " + e + "\n";
        }
    }

    m += "\n## Targets\n\n";
    for (const TargetCheck& t : r.targets) {
        m += std::string("- ") + (t.met ? "met" : "**MISSED**") + ": " +
                t.name + ": " + t.measured +
                (t.met ? "" : "\n  - why: " + t.why) + "\n";
    }
    m += "\n## Notes\n\n";
    for (const std::string& n : r.notes) {
        m += "- " + n + "\n";
    }
    return m;
}

} // namespace ivf
} // namespace bench
