#include "ivf_options.h"

#include "common/options.h"

#include <cstdio>

namespace bench {
namespace ivf {

Plan make_plan(const Settings& o, const std::string& dataset) {
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

bool parse_args(int argc, char** argv, Settings* o, bool* help) {
    Options options(
            "bench_ivf",
            "IVF search through the pool against stock FAISS OpenMP");
    options.add(
            "dataset",
            &o->dataset,
            "NAME",
            "synthetic, fmnist or both (default both)");
    options.add(
            "nb",
            &o->nb,
            "N",
            "synthetic base size (default 500000; --quick 20000)");
    options.add(
            "rounds",
            &o->rounds,
            "N",
            "rounds per scenario (default 2; --quick 1)");
    options.add(
            "topology",
            &o->topology,
            "SPEC",
            "pool topology: auto, NxM or CPU lists (auto: "
            "FAISS_CCD_TOPOLOGY, else hwloc)");
    options.add(
            "lists-out",
            &o->lists_out,
            "DIR",
            "write each data set's list sizes and probe counts for bench_sim "
            "(DIR/<name>.lists) and stop");
    if (!options.parse(argc, argv)) {
        *help = options.help_asked();
        return false;
    }
    o->out = options.out;
    o->quick = options.quick;
    o->command = options.command();
    if (o->dataset != "synthetic" && o->dataset != "fmnist" &&
        o->dataset != "both") {
        fprintf(stderr,
                "bench_ivf: unknown data set '%s'\n",
                o->dataset.c_str());
        return false;
    }
    if (o->nb != 0 && o->nb < 1000) {
        fprintf(stderr, "bench_ivf: --nb wants a number >= 1000\n");
        return false;
    }
    if (o->rounds < 0) {
        fprintf(stderr, "bench_ivf: --rounds wants a positive number\n");
        return false;
    }
    return true;
}

} // namespace ivf
} // namespace bench
