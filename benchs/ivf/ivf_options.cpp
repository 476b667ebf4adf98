#include "ivf_options.h"

#include "common/run_info.h"

#include <cstdio>
#include <cstdlib>

namespace bench {
namespace ivf {

Plan make_plan(const Options& o, const std::string& dataset) {
    Plan p;
    if (o.quick) {
        p.rounds = 1;
        p.single_nq = 300;
        p.clients_nq = 400;
        p.batch_nq = 500;
        p.gt_nq = 500;
        p.single_blocks = 2; // still exercises the turn-taking
        p.clients_blocks = 2;
        p.max_reruns = 0;
    } else if (dataset == "fmnist") {
        // Cheap queries (8 lists of ~230 codes): more queries for the
        // clients, and the ground truth of the whole test set.
        p.clients_nq = 4000;
        p.gt_nq = 10000;
        p.scan_cost_nq = 800;
    }
    if (o.rounds > 0) {
        p.rounds = o.rounds;
    }
    return p;
}

void usage(const char* argv0) {
    fprintf(stderr,
            "usage: %s [--out DIR] [--quick] [--dataset synthetic|fmnist|both]"
            "\n          [--nb N] [--rounds N] [--topology SPEC]\n"
            "  --out DIR        results directory (default benchs/results)\n"
            "  --quick          tiny sizes, well under 30 s (smoke test)\n"
            "  --dataset NAME   synthetic, fmnist or both (default both)\n"
            "  --nb N           synthetic base size (default 500000; --quick"
            " 20000)\n"
            "  --rounds N       rounds per scenario (default 2; --quick 1)\n"
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
        } else if (a == "--dataset" && has_value) {
            o->dataset = argv[++i];
            if (o->dataset != "synthetic" && o->dataset != "fmnist" &&
                o->dataset != "both") {
                fprintf(stderr,
                        "bench_ivf: unknown data set '%s'\n",
                        o->dataset.c_str());
                return false;
            }
        } else if (a == "--nb" && has_value) {
            const long long nb = atoll(argv[++i]);
            if (nb < 1000) {
                fprintf(stderr, "bench_ivf: --nb wants a number >= 1000\n");
                return false;
            }
            o->nb = size_t(nb);
        } else if (a == "--rounds" && has_value) {
            o->rounds = atoi(argv[++i]);
            if (o->rounds <= 0) {
                fprintf(stderr,
                        "bench_ivf: --rounds wants a positive number\n");
                return false;
            }
        } else if (a == "--topology" && has_value) {
            o->topology = argv[++i];
        } else {
            if (a != "--help" && a != "-h") {
                fprintf(stderr, "bench_ivf: bad argument '%s'\n", a.c_str());
            }
            return false;
        }
    }
    return true;
}

} // namespace ivf
} // namespace bench
