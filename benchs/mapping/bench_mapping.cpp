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
 * Writes DIR/mapping.json (every number, per-second series included) and
 * DIR/mapping.md (tables, targets), and prints the markdown.
 * benchs/plot_mapping.py draws DIR/mapping.png. Exit status: 0; 1 when a
 * consistency check failed (a lost task or record, bytes that do not add
 * up; a missed performance target is reported, not an error); 2 on bad
 * arguments.
 */

#include "report.h"

#include <faiss/ccd_scheduler/Topology.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>
#include "common/run_info.h"

#ifndef BENCH_SOURCE_DIR
#define BENCH_SOURCE_DIR "."
#endif

namespace bench {
namespace mapping {
using namespace bench;

namespace {

using faiss::ccd::Topology;

Plan make_plan(const Options& o) {
    Plan p;
    if (o.quick) {
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
    if (o.seconds > 0) {
        p.drift.seconds = o.seconds;
    }
    return p;
}

void usage(const char* argv0) {
    fprintf(stderr,
            "usage: %s [--out DIR] [--quick] [--seconds N]\n"
            "  --out DIR     results directory (default benchs/results)\n"
            "  --quick       small run, < 30 s (smoke test)\n"
            "  --seconds N   simulated seconds of the drifting workload\n"
            "                (default 120; --quick: 20)\n"
            "The submit-path part uses FAISS_CCD_TOPOLOGY, else hwloc.\n",
            argv0);
}

bool parse_args(int argc, char** argv, Options* o) {
    o->command = command_line(argc, argv);
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--quick") {
            o->quick = true;
        } else if (a == "--out" && has_value) {
            o->out = argv[++i];
        } else if (a == "--seconds" && has_value) {
            o->seconds = atoi(argv[++i]);
            if (o->seconds <= 0) {
                fprintf(stderr,
                        "bench_mapping: --seconds wants a positive number\n");
                return false;
            }
        } else {
            if (a != "--help" && a != "-h") {
                fprintf(stderr,
                        "bench_mapping: bad argument '%s'\n",
                        a.c_str());
            }
            return false;
        }
    }
    return true;
}

int main_impl(int argc, char** argv) {
    Run run;
    if (!parse_args(argc, argv, &run.options)) {
        usage(argv[0]);
        return 2;
    }
    run.plan = make_plan(run.options);
    run.info.begin(run.options.command, run.options.quick);
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

    const std::string md = to_markdown(run);
    std::cout << md << std::flush;
    std::filesystem::create_directories(run.options.out);
    const std::filesystem::path dir(run.options.out);
    std::ofstream(dir / "mapping.json") << to_json(run);
    std::ofstream(dir / "mapping.md") << md;
    fprintf(stderr,
            "bench_mapping: wrote %s/mapping.{json,md}\n",
            run.options.out.c_str());
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
