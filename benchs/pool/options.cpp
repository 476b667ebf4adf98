#include "options.h"

#include "common/run_info.h"

#include <cstdio>
#include <cstdlib>

namespace bench {

Plan make_plan(const Options& o) {
    Plan p;
    if (o.quick) {
        p.tasks_per_submitter = 20000;
        p.throughput_reps = 3;
        p.parked_samples = 100;
        p.spinning_samples = 1000;
        p.tree_targets = {1000000};
        p.tree_reps = {3};
    } else {
        p.tasks_per_submitter = 200000;
        p.throughput_reps = 5;
        p.parked_samples = 1000;
        p.spinning_samples = 5000;
        p.tree_targets = {1000000, 10000000};
        p.tree_reps = {5, 3};
    }
    if (o.reps > 0) {
        p.throughput_reps = o.reps;
        for (int& r : p.tree_reps) {
            r = o.reps;
        }
    }
    return p;
}

void usage(const char* argv0) {
    fprintf(stderr,
            "usage: %s [--out DIR] [--quick] [--reps N] [--topology SPEC]\n"
            "  --out DIR        results directory (default benchs/results)\n"
            "  --quick          small run, ~20 s (smoke test)\n"
            "  --reps N         repetitions of every measurement (default: 5,\n"
            "                   3 for the 10^7-task tree; --quick: 3)\n"
            "  --topology SPEC  pool topology: \"auto\", \"NxM\" or CPU lists\n"
            "                   (default: FAISS_CCD_TOPOLOGY, else hwloc)\n",
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
        } else if (a == "--reps" && has_value) {
            o->reps = atoi(argv[++i]);
            if (o->reps <= 0) {
                fprintf(stderr, "bench_pool: --reps wants a positive number\n");
                return false;
            }
        } else if (a == "--topology" && has_value) {
            o->topology = argv[++i];
        } else {
            if (a != "--help" && a != "-h") {
                fprintf(stderr, "bench_pool: bad argument '%s'\n", a.c_str());
            }
            return false;
        }
    }
    return true;
}

} // namespace bench
