/**
 * bench_sim: the scale model (docs/SIMULATION.md). Simulated time only:
 * its figures do not depend on this machine's speed or load, and two runs
 * with the same options and seed write the same JSON (less the run facts).
 *
 *   build/tools/scale_model/bench_sim                  # ~10-15 min on one core
 *   build/tools/scale_model/bench_sim --quick          # seconds: the ctest
 * smoke run python3 -m faiss.contrib.ccd.report benchs/results/sim.json
 *
 * Options: bench_sim --help.
 */

#include "experiments.h"

#include "common/options.h"

#include <cstdio>
#include <stdexcept>
#include <string>

#ifndef BENCH_SIM_DIR
#define BENCH_SIM_DIR "tools/scale_model"
#endif

int main(int argc, char** argv) {
    sim::Options o;
    o.data_dir = std::string(BENCH_SIM_DIR) + "/data";
    o.calibration = std::string(BENCH_SIM_DIR) + "/calibration.json";
    bool deterministic = false;
    bool no_sweeps = false;
    bool host = false;
    int block_kb = 64;
    bench::Options options(
            "bench_sim",
            "the scale model: simulated 12-CCD parts, V0-V3");
    options.add(
            "parts",
            &o.parts,
            "LIST",
            "parts to model (genoa96,rome48; host: the calibrated machine)");
    options.add(
            "calibration",
            &o.calibration,
            "FILE",
            "per-byte costs (tools/scale_model/calibration.json)");
    options.add(
            "l3-ns-per-byte",
            &o.l3_ns_per_byte,
            "X",
            "override the calibration's L3 cost");
    options.add(
            "dram-ns-per-byte",
            &o.dram_ns_per_byte,
            "X",
            "override the calibration's DRAM cost");
    options.add(
            "task-overhead-ns",
            &o.task_overhead_ns,
            "X",
            "override the calibration's per-task cost");
    options.add(
            "data",
            &o.data_dir,
            "DIR",
            "IVF list-size files (tools/scale_model/data)");
    options.add("block-kb", &block_kb, "N", "IVF L3 block size (64)");
    options.add("warmup-s", &o.warmup_s, "S", "simulated warm-up (1)");
    options.add("measure-s", &o.measure_s, "S", "simulated measure (1)");
    options.add(
            "drift-rotate-s",
            &o.drift_rotate_s,
            "S",
            "hot set rotation period of the drifting runs (5)");
    options.add(
            "drift-measure-s",
            &o.drift_measure_s,
            "S",
            "measured time of the drifting runs (12)");
    options.flag(
            "no-sweeps",
            &no_sweeps,
            "skip the threshold and window sweeps");
    options.flag(
            "host",
            &host,
            "only the model of this machine on bench_ivf's indexes "
            "(sim_host.json; tools/scale_model/validate.py judges it)");
    options.add("seed", &o.seed, "N", "random seed (1)");
    options.flag(
            "deterministic",
            &deterministic,
            "leave the date, commit and load out of the JSON");
    if (!options.parse(argc, argv)) {
        return options.help_asked() ? 0 : 2;
    }
    o.command = options.command();
    o.quick = options.quick;
    o.sweeps = !no_sweeps;
    try {
        if (block_kb <= 0 || o.warmup_s < 0 || o.measure_s <= 0 ||
            o.drift_rotate_s <= 0 || o.drift_measure_s <= 0) {
            throw std::invalid_argument(
                    "--block-kb and the simulated times want positive "
                    "values");
        }
        o.ivf_block_bytes = uint32_t(block_kb) * 1024;
        if (o.quick) {
            o.warmup_s = 0.1;
            o.measure_s = 0.1;
            o.sweeps = false;
            o.parts = {"genoa96"};
        }
        if (!o.calibration.empty()) {
            o.costs = sim::load_calibration(o.calibration, o.costs);
        }
        if (o.l3_ns_per_byte > 0) {
            o.costs.l3_ns_per_byte = o.l3_ns_per_byte;
            o.costs.source += ", L3 cost overridden";
        }
        if (o.dram_ns_per_byte > 0) {
            o.costs.dram_ns_per_byte = o.dram_ns_per_byte;
            o.costs.source += ", DRAM cost overridden";
        }
        if (o.task_overhead_ns >= 0) {
            o.costs.task_overhead_ns = o.task_overhead_ns;
            o.costs.source += ", task overhead overridden";
        }
        if (host) {
            o.parts = {"host"};
        }
        for (const std::string& p : o.parts) {
            sim::part_by_name(p, o.costs); // throws on a bad name
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_sim: %s\n", e.what());
        return 2;
    }

    sim::Report rep;
    bench::RunInfo run;
    run.begin(o.command, o.quick);
    try {
        rep = host ? sim::build_host_report(o, stderr)
                   : sim::build_report(o, stderr);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_sim: %s\n", e.what());
        return 1;
    }
    run.end();
    rep.run = run;
    bench::print_report(rep);
    if (!bench::write_report(rep, options.out, deterministic)) {
        return 1;
    }
    return 0;
}
