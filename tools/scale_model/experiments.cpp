#include "experiments.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

namespace sim {

namespace {

const Variant kVariants[] = {
        Variant::V0,
        Variant::V1,
        Variant::V2,
        Variant::V3};

using bench::fmt;

struct Runner {
    const Options& o;
    FILE* progress;

    SimConfig config(const std::string& part, Variant v, int ccds) const {
        SimConfig c;
        c.part = part_by_name(part, o.costs);
        c.enabled_ccds = ccds;
        c.variant = v;
        c.costs = o.costs;
        c.warmup_s = o.warmup_s;
        c.measure_s = o.measure_s;
        c.seed = o.seed;
        return c;
    }
    SimStats run(const SimConfig& c, const Workload& w) const {
        SimStats s = run_simulation(c, w);
        if (progress) {
            std::fprintf(
                    progress,
                    "  %-8s %-3s %2d CCDs %-40.40s %9.0f QPS, miss %.3f, "
                    "cross %.3f\n",
                    c.part.name.c_str(),
                    s.variant.c_str(),
                    s.ccds,
                    w.name().c_str(),
                    s.qps,
                    s.l3_miss_rate(),
                    s.cross_ratio);
        }
        return s;
    }
};

std::unique_ptr<Workload>
ivf(const Options& o, const std::string& data, double rotate_s) {
    IvfConfig c;
    c.lists_file = o.data_dir + "/" + data + ".lists";
    c.block_bytes = o.ivf_block_bytes;
    c.rotate_s = rotate_s;
    c.seed = o.seed;
    return std::make_unique<IvfWorkload>(c);
}

std::unique_ptr<Workload> hnsw(const Options& o, double rotate_s) {
    HnswConfig c;
    c.rotate_s = rotate_s;
    c.seed = o.seed;
    if (o.quick) {
        c.tables = 12;
        c.nodes = 10000;
    }
    return std::make_unique<HnswWorkload>(c);
}

/// hnsw_hot: many small tables, one of them hot (about a fifth of the
/// queries, as bench_hnsw's skewed mix): the case replication is for, since
/// the hot table alone exceeds a CCD's share and one copy fits in half an
/// L3.
std::unique_ptr<Workload> hnsw_hot(const Options& o) {
    HnswConfig c;
    c.tables = 48;
    c.nodes = 3000; // ~10 MB a table at d 784
    c.table_zipf = 1.0;
    c.seed = o.seed;
    return std::make_unique<HnswWorkload>(c);
}

std::vector<Cell> row_of(const std::string& workload, const SimStats& s) {
    return {workload,
            s.variant,
            s.qps / 1e3,
            s.p50_us,
            s.p999_us,
            s.l3_miss_rate(),
            s.cross_ratio,
            s.busy_fraction,
            int(s.remaps),
            int(s.replicated_ids)};
}

} // namespace

Report build_report(const Options& o, FILE* progress) {
    Runner r{o, progress};
    Report rep;
    rep.title = "Simulated 12-CCD parts: V0 / V1 / V2 / V3";
    rep.benchmark = "sim";
    rep.run.command = o.command;
    rep.notes.push_back(
            "A model, not a measurement: docs/SIMULATION.md states every "
            "assumption. Scan costs: " +
            o.costs.source + " (L3 " + fmt("%.4f", o.costs.l3_ns_per_byte) +
            " ns/B, DRAM " + fmt("%.4f", o.costs.dram_ns_per_byte) +
            " ns/B, task overhead " + fmt("%.0f", o.costs.task_overhead_ns) +
            " ns).");
    rep.notes.push_back(
            "Seed " + std::to_string(o.seed) + ", warm-up " +
            fmt("%g", o.warmup_s) + " s, measured " + fmt("%g", o.measure_s) +
            " s of simulated time per run" +
            (o.quick ? " (--quick: smaller)" : "") + ".");

    // ---- scaling: throughput against enabled CCDs ----------------------
    std::unique_ptr<Workload> steady = ivf(o, "synthetic", 0);
    std::vector<int> counts;
    for (int n = 1; n <= 12; n++) {
        if (!o.quick || n == 1 || n == 6 || n == 12) {
            counts.push_back(n);
        }
    }
    double at12[2][4] = {};
    SimStats genoa12[4];
    for (const std::string& part : o.parts) {
        Table t;
        t.title = "Scaling, " + part + ", " + steady->name();
        t.columns = {
                "CCDs",
                "variant",
                "KQPS",
                "P50 us",
                "P999 us",
                "L3 miss",
                "cross-CCD steals"};
        Plot qps, miss, cross, lat;
        qps.title = "IVF throughput vs enabled CCDs, " + part;
        qps.xlabel = "enabled CCDs";
        qps.ylabel = "KQPS";
        qps.file = "scaling";
        miss = qps;
        miss.title = "L3 miss rate (bytes), " + part;
        miss.ylabel = "miss rate";
        miss.file = "cache";
        cross = miss;
        cross.title = "cross-CCD steals / all steals, " + part;
        cross.ylabel = "ratio";
        lat = qps;
        lat.title = "latency P50 (solid) and P999, " + part;
        lat.ylabel = "us";
        lat.yscale = "log";
        lat.file = "latency";
        for (Variant v : kVariants) {
            Series sq{variant_name(v), {}, {}}, sm = sq, sc = sq;
            Series s50{std::string(variant_name(v)) + " P50", {}, {}};
            Series s999{std::string(variant_name(v)) + " P999", {}, {}};
            for (int n : counts) {
                SimStats s = r.run(r.config(part, v, n), *steady);
                t.rows.push_back(
                        {n,
                         s.variant,
                         s.qps / 1e3,
                         s.p50_us,
                         s.p999_us,
                         s.l3_miss_rate(),
                         s.cross_ratio});
                for (Series* x : {&sq, &sm, &sc, &s50, &s999}) {
                    x->x.push_back(n);
                }
                sq.y.push_back(s.qps / 1e3);
                sm.y.push_back(s.l3_miss_rate());
                sc.y.push_back(std::isnan(s.cross_ratio) ? 0 : s.cross_ratio);
                s50.y.push_back(s.p50_us);
                s999.y.push_back(s.p999_us);
                if (n == 12) {
                    at12[part == "genoa96" ? 0 : 1][int(v)] = s.qps;
                    if (part == "genoa96") {
                        genoa12[int(v)] = s;
                    }
                }
            }
            qps.series.push_back(sq);
            miss.series.push_back(sm);
            if (v != Variant::V0) {
                cross.series.push_back(sc);
            }
            lat.series.push_back(s50);
            lat.series.push_back(s999);
        }
        rep.tables.push_back(t);
        for (Plot* p : {&qps, &miss, &cross, &lat}) {
            rep.plots.push_back(*p);
        }
    }

    // ---- every workload at full width (genoa96, 12 CCDs) ---------------
    Table w;
    w.title = "Workloads, genoa96, 12 CCDs";
    w.columns = {
            "workload",
            "variant",
            "KQPS",
            "P50 us",
            "P999 us",
            "L3 miss",
            "cross-CCD steals",
            "busy",
            "re-maps",
            "replicated ids"};
    Options drift = o;
    drift.measure_s = o.quick ? o.measure_s : o.drift_measure_s;
    const double rotate = o.quick ? 0.5 : o.drift_rotate_s;
    struct Case {
        std::string label;
        std::unique_ptr<Workload> wl;
        bool drifting;
    };
    std::vector<Case> cases;
    cases.push_back({"ivf-fmnist", ivf(o, "fmnist", 0), false});
    cases.push_back({"hnsw-skewed", hnsw(o, 0), false});
    cases.push_back({"ivf-drift", ivf(o, "synthetic", rotate), true});
    cases.push_back({"hnsw-drift", hnsw(o, rotate), true});
    cases.push_back({"hnsw-hot", hnsw_hot(o), false});
    double qps_of[5][4] = {};
    size_t replicated_hot = 0;
    for (Variant v : kVariants) {
        w.rows.push_back(row_of("ivf-synthetic", genoa12[int(v)]));
    }
    for (size_t k = 0; k < cases.size(); k++) {
        for (Variant v : kVariants) {
            SimConfig c = r.config("genoa96", v, 12);
            if (cases[k].drifting) {
                c.measure_s = drift.measure_s;
            }
            SimStats s = r.run(c, *cases[k].wl);
            qps_of[k][int(v)] = s.qps;
            if (cases[k].label == "hnsw-hot" && v == Variant::V3) {
                replicated_hot = s.replicated_ids;
            }
            w.rows.push_back(row_of(cases[k].label, s));
        }
    }
    w.text = "Workloads: " + steady->name() + "; ";
    for (const Case& c : cases) {
        w.text += c.label + " = " + c.wl->name() + "; ";
    }
    rep.tables.push_back(w);

    // ---- the sweeps behind V3's defaults --------------------------------
    if (o.sweeps) {
        Table th;
        th.title = "V2's cross-CCD threshold, genoa96, 12 CCDs";
        th.columns = {
                "workload",
                "threshold",
                "KQPS",
                "P999 us",
                "cross-CCD steals"};
        const Case* const sweep_cases[] = {nullptr, &cases[1]};
        for (const Case* c : sweep_cases) {
            const Workload& wl = c ? *c->wl : *steady;
            for (int t : {1, 2, 4, 8, 16, 64}) {
                SimConfig cfg = r.config("genoa96", Variant::V2, 12);
                cfg.steal.cross_ccd_threshold = t;
                SimStats s = r.run(cfg, wl);
                th.rows.push_back(
                        {c ? c->label : "ivf-synthetic",
                         t,
                         s.qps / 1e3,
                         s.p999_us,
                         s.cross_ratio});
            }
        }
        rep.tables.push_back(th);
        Table win;
        win.title = "V2's monitor fast window, ivf-drift, genoa96, 12 CCDs";
        win.columns =
                {"fast window s", "KQPS", "P999 us", "L3 miss", "re-maps"};
        for (double fw : {1.0, 2.0, 5.0, 10.0}) {
            SimConfig cfg = r.config("genoa96", Variant::V2, 12);
            cfg.measure_s = drift.measure_s;
            cfg.monitor.fast_window_s = fw;
            SimStats s = r.run(cfg, *cases[2].wl);
            win.rows.push_back(
                    {fw,
                     s.qps / 1e3,
                     s.p999_us,
                     s.l3_miss_rate(),
                     int(s.remaps)});
        }
        rep.tables.push_back(win);
    }

    // ---- targets ---------------------------------------------------------
    const double* g = at12[0];
    auto ratio = [](double a, double b) {
        return b > 0 ? a / b : 0;
    };
    Target t1{
            "IVF V2/V0 >= 3.5x (genoa96, 12 CCDs)",
            fmt("%.2fx", ratio(g[2], g[0])),
            ratio(g[2], g[0]) >= 3.5,
            "",
            ""};
    Target t2{
            "IVF V2/V1 >= 1.4x (genoa96, 12 CCDs)",
            fmt("%.2fx", ratio(g[2], g[1])),
            ratio(g[2], g[1]) >= 1.4,
            "",
            ""};
    if (!t1.met) {
        t1.why = "in the model V0 loses to V2 only by its L3 misses and its "
                 "shared queue's line transfers; it has no OpenMP fork/join "
                 "or oversubscription cost, which the paper's V0 pays";
        t1.next =
                "measure stock FAISS's per-query OpenMP cost on the real "
                "bench and add it to V0 if it is material";
    }
    if (!t2.met) {
        t2.why = "V1's cache behaviour is V0's in the model (any core scans "
                 "any list); the gap is the L3 hit rate alone";
    }
    const double cr = genoa12[2].cross_ratio;
    Target t3{
            "cross-CCD steals <= 5% for V2 (IVF, genoa96)",
            fmt("%.1f%%", 100 * cr),
            cr <= 0.05,
            "",
            ""};
    if (!t3.met) {
        t3.why = "every CCD's queues stay deep under closed-loop load, so "
                 "the threshold rarely bites; cross steals happen when a "
                 "CCD's share runs out before the others'";
        t3.next = "see the threshold sweep";
    }
    Target t4{
            "V3 ahead of V2 on the skewed workload (hnsw-skewed)",
            fmt("%.2fx", ratio(qps_of[1][3], qps_of[1][2])),
            qps_of[1][3] > qps_of[1][2],
            "",
            ""};
    Target t5{
            "V3 ahead of V2 on the drifting workload (ivf-drift)",
            fmt("%.2fx", ratio(qps_of[2][3], qps_of[2][2])),
            qps_of[2][3] > qps_of[2][2],
            "",
            ""};
    Target t6{
            "V3 ahead of V2 with one hot small table (hnsw-hot: replication)",
            fmt("%.2fx", ratio(qps_of[4][3], qps_of[4][2])) + ", " +
                    std::to_string(replicated_hot) + " id(s) replicated",
            qps_of[4][3] > qps_of[4][2] && replicated_hot > 0,
            "",
            ""};
    for (Target* t : {&t4, &t5, &t6}) {
        if (!t->met) {
            t->why = "replication and the shorter window did not pay on this "
                     "workload in the model";
        }
    }
    rep.notes.push_back(
            "The model's validation against this machine's measurements is "
            "its own report: sim_validation.md (bench_sim --host, then "
            "tools/scale_model/validate.py; docs/SIMULATION.md, section "
            "Validation).");
    rep.targets = {t1, t2, t3, t4, t5, t6};
    return rep;
}

Report build_host_report(const Options& o, FILE* progress) {
    Runner r{o, progress};
    Report rep;
    rep.title = "The scale model of this machine, on bench_ivf's indexes";
    rep.benchmark = "sim_host";
    rep.notes.push_back(
            "Predictions, to be set beside bench_ivf's measurements by "
            "tools/scale_model/validate.py. Scan costs: " +
            o.costs.source + " (L3 " + fmt("%.4f", o.costs.l3_ns_per_byte) +
            " ns/B, DRAM " + fmt("%.4f", o.costs.dram_ns_per_byte) +
            " ns/B one core, " + fmt("%.2f", o.costs.host.dram_gbps) +
            " GB/s all cores, task overhead " +
            fmt("%.0f", o.costs.task_overhead_ns) + " ns).");
    const Part host = part_by_name("host", o.costs);
    rep.notes.push_back(
            "Part host: " + std::to_string(host.ccds) + " L3 domain(s) x " +
            std::to_string(host.cores_per_ccd) + " cores, " +
            std::to_string(host.l3_bytes >> 20) +
            " MB L3 each. Queries draw lists by the measured probe counts "
            "of bench_ivf's own queries; a closed loop of 1 or 8 clients, "
            "as bench_ivf's single-client and 8-client scenarios.");
    Table t;
    t.title = "Predicted, host";
    t.columns = {
            "data",
            "clients",
            "variant",
            "QPS",
            "P50 ms",
            "P999 ms",
            "L3 miss",
            "busy"};
    for (const char* data : {"synthetic", "fmnist"}) {
        IvfConfig c;
        c.lists_file = o.data_dir + "/bench_ivf/" + data + ".lists";
        c.block_bytes = o.ivf_block_bytes;
        c.measured_popularity = true;
        c.seed = o.seed;
        const IvfWorkload w(c);
        for (int clients : {1, 8}) {
            for (Variant v : {Variant::V0, Variant::V1, Variant::V2}) {
                SimConfig cfg = r.config("host", v, 0);
                cfg.clients = clients;
                const SimStats s = r.run(cfg, w);
                t.rows.push_back(
                        {std::string(data),
                         clients,
                         s.variant,
                         s.qps,
                         s.p50_us / 1e3,
                         s.p999_us / 1e3,
                         s.l3_miss_rate(),
                         s.busy_fraction});
            }
        }
    }
    rep.tables.push_back(t);
    return rep;
}

} // namespace sim
