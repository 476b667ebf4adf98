#include "ivf_report.h"

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

namespace {

/// scenario_table: every contender of one scenario, with its ratios to
/// the best stock mode of that scenario.
Table scenario_table(const DatasetResults& r, const std::string& scenario) {
    const Best q = best_stock(r, scenario, &ScenarioRow::qps, true);
    const Best s50 = best_stock(r, scenario, &ScenarioRow::p50, false);
    const Best s999 = best_stock(r, scenario, &ScenarioRow::p999, false);
    Table t;
    t.columns = {
            "contender",
            "QPS",
            "QPS / best stock",
            "QPS / own batch",
            "P50 ms",
            "P99 ms",
            "P999 ms",
            "P50 / best stock",
            "P999 / best stock",
            "recall@10",
            "CPU ours %",
            "CPU others %",
            "noisy blocks rerun"};
    for (const ScenarioRow& row : r.rows) {
        if (row.scenario != scenario) {
            continue;
        }
        const ScenarioRow* b = r.row("batch", row.contender);
        const bool latency = scenario != "batch";
        t.rows.push_back(
                {row.contender,
                 row.qps,
                 ratio(row.qps, q.value),
                 b && scenario == "clients" ? ratio(row.qps, b->qps) : NAN,
                 latency ? row.p50 : NAN,
                 latency ? row.p99 : NAN,
                 latency ? row.p999 : NAN,
                 latency ? ratio(row.p50, s50.value) : NAN,
                 latency ? ratio(row.p999, s999.value) : NAN,
                 row.recall10 >= 0 ? row.recall10 : NAN,
                 row.own_cpu >= 0 ? 100 * row.own_cpu : NAN,
                 row.other_cpu >= 0 ? 100 * row.other_cpu : NAN,
                 row.reruns});
    }
    return t;
}

Plot scenario_plot(const DatasetResults& r, const char* what) {
    const bool qps = std::string(what) == "qps";
    Plot p{qps ? "QPS / best stock mode" : "P50 and P999 / best stock mode",
           "",
           "ratio"};
    p.kind = "bar";
    p.categories = r.contenders;
    const char* scenarios[] = {"single", "clients", "batch"};
    for (const char* scenario : scenarios) {
        for (double ScenarioRow::*m :
             {&ScenarioRow::qps, &ScenarioRow::p50, &ScenarioRow::p999}) {
            const bool is_qps = m == &ScenarioRow::qps;
            if (is_qps != qps || (!qps && std::string(scenario) == "batch")) {
                continue;
            }
            const Best best = best_stock(r, scenario, m, is_qps);
            Series s{
                    std::string(scenario) +
                            (is_qps                           ? ""
                                     : m == &ScenarioRow::p50 ? " P50"
                                                              : " P999"),
                    {},
                    {}};
            for (size_t i = 0; i < r.contenders.size(); i++) {
                if (const ScenarioRow* row = r.row(scenario, r.contenders[i])) {
                    s.x.push_back(double(i));
                    s.y.push_back(ratio(row->*m, best.value));
                }
            }
            p.series.push_back(s);
        }
    }
    return p;
}

} // namespace

Report to_report(const DatasetResults& r) {
    Report rep;
    rep.benchmark = "ivf_" + r.dataset;
    rep.title = "bench_ivf: " + r.dataset;
    rep.run = r.run;
    rep.notes.push_back("data: " + r.description);
    rep.notes.push_back(fmt(
            "index: IVF%zu,Flat over %zu x %d, nprobe %zu, k %d; lists: "
            "avg %.0f, max %zu (%.1fx avg), largest 1%% hold %.0f%% of "
            "codes, %zu empty; %s in %.1f s (`%s`)",
            r.nlist,
            r.nb,
            r.d,
            r.nprobe,
            r.k,
            r.lists.avg,
            r.lists.max,
            r.lists.max_over_avg,
            100 * r.lists.top1pct_share,
            r.lists.empty,
            r.index_from_cache ? "loaded from the cache" : "built and cached",
            r.build_seconds,
            r.cache_file.c_str()));
    if (r.recall10_all >= 0) {
        rep.notes.push_back(
                fmt("recall@10 against exact search (IndexFlatL2), stock-pm0 "
                    "over %zu queries: %.4f (ground truth in %.1f s)",
                    r.recall10_all_queries,
                    r.recall10_all,
                    r.gt_seconds));
    }
    int reruns = 0;
    for (const ScenarioRow& row : r.rows) {
        reruns += row.reruns;
    }
    rep.notes.push_back(fmt(
            "plan: %d round(s) per scenario; in a round the contenders take "
            "turns block by block (single: %d blocks, clients: %d, batch: "
            "1), each block starting with another contender, backwards in "
            "odd rounds; tables give the median of the rounds. Samples per "
            "round: single %zu, %d clients %zu, batch %zu queries. CPU ours "
            "/ others: shares of the whole machine used by this process and "
            "by everything else during the measured runs (getrusage, "
            "/proc/stat); others' share is the noise. A block of 0.5 s or "
            "more during which others took over %.0f%% of the machine was "
            "measured again (at most %d times, %.0f s per data set): %d "
            "blocks, %.0f s discarded. Largest workers per CCD: %d.",
            r.rounds,
            r.single_blocks,
            r.clients_blocks,
            r.single_nq,
            r.nclients,
            r.clients_nq,
            r.batch_nq,
            100 * r.noisy_share,
            r.max_reruns,
            r.rerun_budget_s,
            reruns,
            r.rerun_seconds,
            r.max_workers_per_ccd));
    for (size_t i = 0; i < r.contenders.size(); i++) {
        rep.notes.push_back(
                r.contenders[i] + ": " + r.contender_descriptions[i]);
    }
    rep.targets = r.targets;

    Table single = scenario_table(r, "single");
    single.title =
            fmt("Single client, single queries (%zu per round)", r.single_nq);
    Table clients = scenario_table(r, "clients");
    clients.title =
            fmt("%d clients, single queries, closed loop (%zu per "
                "round)",
                r.nclients,
                r.clients_nq);
    Table batch = scenario_table(r, "batch");
    batch.title = fmt("One batch of %zu queries", r.batch_nq);
    rep.tables = {single, clients, batch};

    Table pool;
    pool.title = "Pool counters (summed over rounds)";
    pool.columns = {
            "scenario",
            "contender",
            "tasks / query",
            "local pops",
            "intra-CCD steals",
            "cross-CCD steals",
            "cross ratio %",
            "parks",
            "tasks per CCD"};
    for (const ScenarioRow& row : r.rows) {
        if (row.has_pool) {
            std::string per;
            for (uint64_t t : row.tasks_per_ccd) {
                per += (per.empty() ? "" : " / ") + std::to_string(t);
            }
            pool.rows.push_back(
                    {row.scenario,
                     row.contender,
                     row.tasks_per_query,
                     row.local_pops,
                     row.intra_steals,
                     row.cross_steals,
                     100 * row.cross_steal_ratio,
                     row.parks,
                     per});
        }
    }
    rep.tables.push_back(pool);

    Table same;
    same.title = "Results against stock-pm0 (same scenario, same queries)";
    same.text = "Labels may differ among equal distances (ties).";
    same.columns = {
            "scenario",
            "contender",
            "queries",
            "with a different distance",
            "with a different label",
            "examples"};
    for (const ScenarioRow& row : r.rows) {
        if (row.compared) {
            std::string examples;
            for (const std::string& e : row.mismatch.examples) {
                examples += (examples.empty() ? "" : "; ") + e;
            }
            same.rows.push_back(
                    {row.scenario,
                     row.contender,
                     uint64_t(row.mismatch.compared),
                     uint64_t(row.mismatch.distance_queries),
                     uint64_t(row.mismatch.label_queries),
                     examples});
        }
    }
    rep.tables.push_back(same);

    if (r.has_scan_cost) {
        const ScanCost& c = r.scan_cost;
        Table scan;
        scan.title =
                fmt("Scan cost on one thread (%zu queries, k %d; "
                    "ivf_scan_cost.h)",
                    c.queries,
                    c.k);
        scan.text =
                fmt("Coarse quantizer, process CPU per query: %.3f ms one "
                    "query per call, %.3f ms with %zu in one call (a "
                    "batch: BLAS). Queries whose distances differ from "
                    "one_heap's: %zu.",
                    c.coarse_ms_single,
                    c.coarse_ms_batch,
                    c.coarse_batch_nq,
                    c.distance_mismatches);
        scan.columns = {
                "variant",
                "ms per query",
                "vs one_heap",
                "heaps merged per query"};
        for (size_t i = 0; i < c.variants.size(); i++) {
            scan.rows.push_back(
                    {c.variants[i],
                     c.ms_per_query[i],
                     ratio(c.ms_per_query[i], c.ms_per_query[0]),
                     c.tasks_per_query[i]});
        }
        rep.tables.push_back(scan);
    }
    if (r.has_split) {
        const SplitAnalysis& a = r.split;
        Table split;
        split.title = "List splitting over the single-client queries";
        split.columns = {
                "queries",
                "workers",
                "split threshold",
                "chunk",
                "lists / query",
                "tasks / query",
                "split lists / query",
                "codes / query",
                "largest task share, no split",
                "split",
                "ideal speed-up, no split",
                "split"};
        split.rows.push_back(
                {uint64_t(a.queries),
                 a.workers,
                 double(a.split_threshold),
                 double(a.chunk),
                 a.lists_per_query,
                 a.tasks_per_query,
                 a.split_lists_per_query,
                 a.codes_per_query,
                 a.largest_task_share_nosplit,
                 a.largest_task_share_split,
                 a.ideal_speedup_nosplit,
                 a.ideal_speedup_split});
        rep.tables.push_back(split);
    }

    Table rounds;
    rounds.title = "Every round";
    rounds.columns = {
            "scenario",
            "contender",
            "round",
            "seconds",
            "QPS",
            "CPU ours %",
            "CPU others %",
            "P50 ms",
            "P99 ms",
            "P999 ms",
            "mean ms",
            "max ms",
            "samples"};
    for (const ScenarioRow& row : r.rows) {
        for (size_t i = 0; i < row.rounds.size(); i++) {
            const RunResult& rr = row.rounds[i];
            const bool lat = rr.latency.samples > 0;
            rounds.rows.push_back(
                    {row.scenario,
                     row.contender,
                     int(i),
                     rr.seconds,
                     rr.qps,
                     100 * rr.own_cpu,
                     100 * rr.other_cpu,
                     lat ? rr.latency.p50 : NAN,
                     lat ? rr.latency.p99 : NAN,
                     lat ? rr.latency.p999 : NAN,
                     lat ? rr.latency.mean : NAN,
                     lat ? rr.latency.max : NAN,
                     uint64_t(rr.latency.samples)});
        }
    }
    rep.tables.push_back(rounds);
    rep.sections.push_back({"Notes", ""});
    for (const std::string& n : r.notes) {
        rep.sections.back().text += "- " + n + "\n";
    }
    rep.plots = {scenario_plot(r, "qps"), scenario_plot(r, "latency")};
    return rep;
}

} // namespace ivf
} // namespace bench
