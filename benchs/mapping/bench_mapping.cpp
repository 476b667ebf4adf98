/**
 * bench_mapping: traffic-aware placement under a drifting workload, and
 * what placement costs (issue 4).
 *
 *   bench_mapping [--out DIR] [--quick] [--seconds N]
 *
 * Parts:
 *   (1) drift: a drifting Zipf workload (15 tables x 8192 lists; the hot
 *       set rotates every 5 simulated seconds) on emulated topologies 4x2
 *       and 12x8: per-CCD traffic imbalance per second for hash,
 *       round-robin, the paper's placement and the migration-aware one,
 *       re-maps and the traffic each moved (drift.h). Simulated time: no
 *       sleeping, same numbers on every machine.
 *   (2) build: time to build a map for 15 x 8192 ids on 12 CCDs
 *       (costs.h); target <= 5 ms.
 *   (3) submit: small-list scan tasks on a real pool with the monitor off,
 *       on, and on with a snapshot swap every millisecond, plus the bare
 *       cost of record() and of placement lookups (costs.h); target: the
 *       monitor costs <= 3% of a task.
 *
 * Writes DIR/mapping.json (every number, per-second series included, as
 * tables, plots and targets) and prints the tables and targets;
 * scripts/report.sh DIR/mapping.json renders its markdown and plots.
 * Exit status: 0; 1 when a
 * consistency check failed (a lost task or record, bytes that do not add
 * up; a missed performance target is reported, not an error); 2 on bad
 * arguments.
 */

#include "report.h"

#include <faiss/ccd_scheduler/Topology.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>
#include "common/options.h"

namespace bench {
namespace mapping {
using namespace bench;

namespace {

using faiss::ccd::Topology;

Plan make_plan(bool quick, int seconds) {
    Plan p;
    if (quick) {
        p.drift.seconds = 20;
        p.drift.accesses_per_s = 20000;
        p.build.runs = 5;
        p.submit.rounds = 8;
        p.submit.queries_per_rep = 100;
        p.submit.record_batches = 20;
        p.submit.lookups = 1 << 18;
    } else {
        p.drift.seconds = 120;
        p.drift.accesses_per_s = 40000;
        p.build.runs = 20;
        p.submit.rounds = 100;
        p.submit.queries_per_rep = 200;
    }
    if (seconds > 0) {
        p.drift.seconds = seconds;
    }
    return p;
}

int main_impl(int argc, char** argv) {
    Options options(
            "bench_mapping",
            "placement under a drifting workload, and its costs");
    int seconds = -1;
    options.add(
            "seconds",
            &seconds,
            "N",
            "simulated seconds of the drifting workload (default 120; "
            "--quick: 20)");
    if (!options.parse(argc, argv)) {
        return options.help_asked() ? 0 : 2;
    }
    if (seconds == 0 || seconds < -1) {
        fprintf(stderr, "bench_mapping: --seconds wants a positive number\n");
        return 2;
    }
    Run run;
    run.plan = make_plan(options.quick, seconds);
    run.info.begin(options.command(), options.quick);
    const Topology submit_topology = Topology::from_string("auto");
    run.info.topology = submit_topology.describe();
    run.info.topology_note = submit_topology.note();
    fprintf(stderr, "bench_mapping: %s\n", run.info.topology.c_str());

    for (const std::string& spec : run.plan.topologies) {
        DriftPlan dp = run.plan.drift;
        dp.topology = spec;
        fprintf(stderr,
                "bench_mapping: (1) drift on %s, %d s...\n",
                spec.c_str(),
                dp.seconds);
        run.drift.push_back(run_drift(dp));
        run.consistent = run.consistent && run.drift.back().consistent;
    }
    fprintf(stderr, "bench_mapping: (2) map build time...\n");
    run.build = run_build_time(run.plan.build);
    fprintf(stderr, "bench_mapping: (3) submit path...\n");
    run.submit = run_submit_path(run.plan.submit);
    run.consistent = run.consistent && run.submit.checks_ok;
    run.info.end();
    run.targets = make_targets(run);

    const Report report = to_report(run);
    print_report(report);
    if (!write_report(report, options.out)) {
        return 1;
    }
    if (!run.consistent) {
        fprintf(stderr, "bench_mapping: a consistency check FAILED\n");
        return 1;
    }
    return 0;
}

} // namespace
} // namespace mapping
} // namespace bench

int main(int argc, char** argv) {
    try {
        return bench::mapping::main_impl(argc, argv);
    } catch (const std::exception& e) {
        fprintf(stderr, "bench_mapping: %s\n", e.what());
        return 1;
    }
}
