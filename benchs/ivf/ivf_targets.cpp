// judge_targets: the targets, judged on one data set's results,
// and the measured notes the diagnosis of a miss rests on.

#include "ivf_report.h"

#include "ivf_report_util.h"

#include <algorithm>
#include <cstdio>

namespace bench {
namespace ivf {

using namespace report_util;

void judge_targets(DatasetResults* r) {
    r->targets.clear();
    r->notes.clear();
    const Best s50 = best_stock(*r, "single", &ScenarioRow::p50, false);
    const Best s999 = best_stock(*r, "single", &ScenarioRow::p999, false);
    const Best cq = best_stock(*r, "clients", &ScenarioRow::qps, true);
    const Best c50 = best_stock(*r, "clients", &ScenarioRow::p50, false);
    const Best c999 = best_stock(*r, "clients", &ScenarioRow::p999, false);
    const Best bq = best_stock(*r, "batch", &ScenarioRow::qps, true);
    const ScenarioRow* one_thread = r->row("single", "stock-pm0");
    const double workers = double(r->run.hardware_concurrency);
    std::string scan;
    if (r->has_scan_cost && r->scan_cost.ms_per_query.size() == 4) {
        const ScanCost& c = r->scan_cost;
        scan =
                fmt("; scan CPU per query on one thread: %.2f ms with one "
                    "heap per query (stock), %.2f ms with per-task heaps "
                    "seeded by the query's k-th distance (IndexIVFCCD, "
                    "%.1f tasks), %.2f ms with fresh top-%d heaps per task "
                    "(IndexIVFCCD before 7665db7)",
                    c.ms_per_query[0],
                    c.ms_per_query[3],
                    c.tasks_per_query[3],
                    c.ms_per_query[2],
                    c.k);
    }

    for (const char* name : kPools) {
        const ScenarioRow* s = r->row("single", name);
        const ScenarioRow* c = r->row("clients", name);
        const ScenarioRow* b = r->row("batch", name);
        if (!s || !c || !b) {
            continue;
        }
        auto add = [&](std::string target,
                       double value,
                       double limit,
                       bool at_most,
                       std::string measured,
                       std::string why) {
            Target t;
            t.target = std::string(name) + " " + target;
            t.measured = std::move(measured);
            t.met = at_most ? value <= limit : value >= limit;
            if (!t.met) {
                t.why = std::move(why);
            }
            r->targets.push_back(std::move(t));
        };
        // Speed-up of one query over one thread (stock-pm0 runs a single
        // query on one thread), against what splitting allows at best.
        const std::string speedup = one_thread && r->has_split
                ? fmt("a perfect %g-way split of stock-pm0's one-thread P50 "
                      "(%.2f ms) would be %.2fx the best stock P50; "
                      "speed-up over one thread: %s %.2fx, stock-pm1 %.2fx, "
                      "ideal with this splitting %.2fx; %s's calling thread "
                      "scans, with %.1f helper tasks per query",
                      workers,
                      one_thread->p50,
                      ratio(one_thread->p50 / workers, s50.value),
                      name,
                      ratio(one_thread->p50, s->p50),
                      ratio(one_thread->p50,
                            r->row("single", "stock-pm1")
                                    ? r->row("single", "stock-pm1")->p50
                                    : 0),
                      r->split.ideal_speedup_split,
                      name,
                      s->tasks_per_query) +
                        scan
                : scan;
        const double cpu_ms = ratio(1000 * workers, c->qps);
        const double cpu_ms_stock = ratio(1000 * workers, cq.value);
        const std::string cpu =
                fmt("CPU per query at 8 clients: %s %.2f ms, %s %.2f ms "
                    "(%g cores / QPS)",
                    name,
                    cpu_ms,
                    cq.who.c_str(),
                    cpu_ms_stock,
                    workers) +
                scan;

        add(fmt("single P50 <= 0.9x best stock (%s)", s50.who.c_str()),
            ratio(s->p50, s50.value),
            0.9,
            true,
            fmt("%.2fx (%.3f vs %.3f ms)",
                ratio(s->p50, s50.value),
                s->p50,
                s50.value),
            speedup);
        add(fmt("single P999 <= 0.5x best stock (%s)", s999.who.c_str()),
            ratio(s->p999, s999.value),
            0.5,
            true,
            fmt("%.2fx (%.2f vs %.2f ms)",
                ratio(s->p999, s999.value),
                s->p999,
                s999.value),
            fmt("P999/P50: %s %.1f, %s %.1f; the tail of every contender "
                "is set by preemption on a shared 2-core machine (load "
                "average %.2f before, %.2f after)",
                name,
                ratio(s->p999, s->p50),
                s999.who.c_str(),
                ratio(s999.value, r->row("single", s999.who)->p50),
                r->run.loadavg_before,
                r->run.loadavg_after));
        add(fmt("8 clients QPS >= 1.0x best stock (%s)", cq.who.c_str()),
            ratio(c->qps, cq.value),
            1.0,
            false,
            fmt("%.2fx (%.1f vs %.1f QPS)",
                ratio(c->qps, cq.value),
                c->qps,
                cq.value),
            cpu);
        add("8 clients QPS >= 0.97x its own batch QPS",
            ratio(c->qps, b->qps),
            0.97,
            false,
            fmt("%.2fx (%.1f vs %.1f QPS; %.2fx the best batch QPS %.1f)",
                ratio(c->qps, b->qps),
                c->qps,
                b->qps,
                ratio(c->qps, bq.value),
                std::max(bq.value, b->qps)),
            fmt("%s; the calling thread scans its own search; workers help "
                "only where the measured costs pay (none while other callers "
                "hold the cores), a batch list-major by units of one list "
                "chunk and 32 queries%s",
                cpu.c_str(),
                r->has_scan_cost
                        ? fmt("; coarse quantization costs %.3f ms CPU per "
                              "query one at a time, %.3f ms in a batch "
                              "(BLAS)",
                              r->scan_cost.coarse_ms_single,
                              r->scan_cost.coarse_ms_batch)
                                  .c_str()
                        : ""));
        add(fmt("8 clients P50 <= 1.0x best stock (%s)", c50.who.c_str()),
            ratio(c->p50, c50.value),
            1.0,
            true,
            fmt("%.2fx (%.2f vs %.2f ms)",
                ratio(c->p50, c50.value),
                c->p50,
                c50.value),
            fmt("a closed loop keeps %d queries in flight, so at full load "
                "latency follows CPU per query: %d / QPS = %.2f ms for %s, "
                "%.2f ms for %s; a stock client that is descheduled between "
                "two calls waits outside the timed search(), a pool client "
                "waits inside it",
                r->nclients,
                r->nclients,
                ratio(1000.0 * r->nclients, c->qps),
                name,
                ratio(1000.0 * r->nclients, r->row("clients", c50.who)->qps),
                c50.who.c_str()));
        add(fmt("8 clients P999 <= 0.5x best stock (%s)", c999.who.c_str()),
            ratio(c->p999, c999.value),
            0.5,
            true,
            fmt("%.2fx (%.2f vs %.2f ms)",
                ratio(c->p999, c999.value),
                c->p999,
                c999.value),
            fmt("P999/P50: %s %.1f, %s %.1f",
                name,
                ratio(c->p999, c->p50),
                c999.who.c_str(),
                ratio(c999.value, r->row("clients", c999.who)->p50)));
        add(fmt("batch QPS >= 1.0x best stock (%s)", bq.who.c_str()),
            ratio(b->qps, bq.value),
            1.0,
            false,
            fmt("%.2fx (%.1f vs %.1f QPS)",
                ratio(b->qps, bq.value),
                b->qps,
                bq.value),
            fmt("CPU per query in the batch: %s %.2f ms, %s %.2f ms",
                name,
                ratio(1000 * workers, b->qps),
                bq.who.c_str(),
                ratio(1000 * workers, bq.value)) +
                    scan);
    }

    // Notes: measured facts the diagnosis rests on.
    if (r->has_split) {
        const SplitAnalysis& a = r->split;
        r->notes.push_back(
                fmt("List splitting over the %zu single-client queries: %.1f "
                    "probed lists and %.0f codes per query; lists over %.0f "
                    "codes are cut into chunks of %.0f: %.1f lists per query "
                    "are cut, giving %.1f scan units per query (when helpers "
                    "share the query; a query scanned alone is not cut). The "
                    "largest unit holds %.0f%% of a query's codes without "
                    "splitting, %.0f%% "
                    "with it; the speed-up %d perfectly balanced workers could "
                    "reach: %.2fx without, %.2fx with splitting.",
                    a.queries,
                    a.lists_per_query,
                    a.codes_per_query,
                    a.split_threshold,
                    a.chunk,
                    a.split_lists_per_query,
                    a.tasks_per_query,
                    100 * a.largest_task_share_nosplit,
                    100 * a.largest_task_share_split,
                    a.workers,
                    a.ideal_speedup_nosplit,
                    a.ideal_speedup_split));
    }
    if (r->has_scan_cost) {
        const ScanCost& c = r->scan_cost;
        std::string v;
        for (size_t i = 0; i < c.variants.size(); i++) {
            v +=
                    fmt("%s%s %.3f ms (%.1f heaps)",
                        i ? ", " : "",
                        c.variants[i].c_str(),
                        c.ms_per_query[i],
                        c.tasks_per_query[i]);
        }
        r->notes.push_back(
                fmt("Scan CPU per query on one thread, %zu queries, k %d: %s; "
                    "%zu queries with a variant's distances differing.",
                    c.queries,
                    c.k,
                    v.c_str(),
                    c.distance_mismatches));
    }
    const ScenarioRow* ns = r->row("single", "pool-ccd-nosplit");
    const ScenarioRow* sp = r->row("single", "pool-ccd");
    if (ns && sp) {
        r->notes.push_back(
                fmt("Measured effect of splitting (single client): pool-ccd "
                    "P50 %.3f / P99 %.3f / P999 %.2f ms with splitting (%.1f "
                    "tasks per query), %.3f / %.3f / %.2f ms without "
                    "(pool-ccd-nosplit, %.1f tasks).",
                    sp->p50,
                    sp->p99,
                    sp->p999,
                    sp->tasks_per_query,
                    ns->p50,
                    ns->p99,
                    ns->p999,
                    ns->tasks_per_query));
    }
    const ScenarioRow* nc = r->row("clients", "pool-ccd-nosplit");
    const ScenarioRow* cc = r->row("clients", "pool-ccd");
    if (nc && cc) {
        r->notes.push_back(
                fmt("Measured effect of splitting (%d clients): pool-ccd %.1f "
                    "QPS, P50 %.2f / P999 %.2f ms with splitting; %.1f QPS, "
                    "%.2f / %.2f ms without (pool-ccd-nosplit).",
                    r->nclients,
                    cc->qps,
                    cc->p50,
                    cc->p999,
                    nc->qps,
                    nc->p50,
                    nc->p999));
    }
    const ScenarioRow* noisiest = nullptr;
    for (const ScenarioRow& row : r->rows) {
        if (!noisiest || row.other_cpu > noisiest->other_cpu) {
            noisiest = &row;
        }
    }
    if (noisiest && noisiest->other_cpu >= 0) {
        r->notes.push_back(
                fmt("Other work on the machine took up to %.0f%% of its CPU "
                    "during a run (median of rounds; %s %s)%s.",
                    100 * noisiest->other_cpu,
                    noisiest->scenario.c_str(),
                    noisiest->contender.c_str(),
                    noisiest->other_cpu > 0.05
                            ? ": numbers of such runs are polluted; compare "
                              "rounds in the JSON"
                            : ""));
    }
    if (r->max_workers_per_ccd == 1) {
        r->notes.push_back(
                "Every CCD of this topology has one worker: there is no "
                "sibling to steal from, so every steal is a cross-CCD steal "
                "by construction and the cross-CCD ratio below says nothing "
                "about locality here (emulate a shape with --topology, e.g. "
                "1x2, or run on a chiplet machine).");
    }
    const ScenarioRow* spin = r->row("single", "pool-ccd-spin");
    if (spin && sp) {
        const double q = double(r->single_nq) * double(r->rounds);
        r->notes.push_back(fmt(
                "Parking (single client): pool-ccd's workers park %.2f "
                "times per query (asleep between two queries of one "
                "client, woken by the next submit); pool-ccd-spin, whose "
                "idle workers poll ~1000x longer, parks %.2f times per "
                "query: P50 %.3f / P99 %.3f / P999 %.2f ms against pool-ccd's "
                "%.3f / %.3f / %.2f ms (CPU used: %.0f%% vs %.0f%% of the "
                "machine).",
                ratio(double(sp->parks), q),
                ratio(double(spin->parks), q),
                spin->p50,
                spin->p99,
                spin->p999,
                sp->p50,
                sp->p99,
                sp->p999,
                100 * spin->own_cpu,
                100 * sp->own_cpu));
    }
    for (const char* name : kPools) {
        for (const char* sc : {"single", "clients", "batch"}) {
            const ScenarioRow* row = r->row(sc, name);
            if (row && row->has_pool) {
                r->notes.push_back(
                        fmt("%s %s: %.1f helper tasks per query, %llu "
                            "intra-CCD and "
                            "%llu cross-CCD steals (cross ratio %.0f%%), %llu "
                            "parks.",
                            name,
                            sc,
                            row->tasks_per_query,
                            (unsigned long long)row->intra_steals,
                            (unsigned long long)row->cross_steals,
                            100 * row->cross_steal_ratio,
                            (unsigned long long)row->parks));
            }
        }
    }
}

} // namespace ivf
} // namespace bench
