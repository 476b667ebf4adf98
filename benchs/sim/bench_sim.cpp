/**
 * bench_sim: the scale model (docs/SIMULATION.md). Simulated time only:
 * its figures do not depend on this machine's speed or load, and two runs
 * with the same options and seed write the same JSON (less the run facts).
 *
 *   build/benchs/bench_sim                  # ~10-15 min on one core
 *   build/benchs/bench_sim --quick          # seconds: the ctest smoke run
 *   python3 -m faiss.contrib.ccd.report benchs/results/sim.json
 *
 * Options:
 *   --out DIR               results directory (benchs/results)
 *   --parts genoa96,rome48  parts to model
 *   --calibration FILE      per-byte costs (benchs/sim/calibration.json)
 *   --l3-ns-per-byte X, --dram-ns-per-byte X, --task-overhead-ns X
 *                           override the calibration file
 *   --data DIR              IVF list-size files (benchs/sim/data)
 *   --block-kb N            IVF L3 block size (64)
 *   --warmup-s S, --measure-s S   simulated seconds per run (1, 1)
 *   --drift-rotate-s S, --drift-measure-s S   drifting runs (5, 12)
 *   --no-sweeps             skip the threshold and window sweeps
 *   --seed N                (1)
 *   --quick                 small runs, CCD counts 1, 6, 12
 *   --deterministic         leave the date, commit and load out of the JSON
 */

#include "experiments.h"

#include "common/run_info.h"

#include <sys/stat.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#ifndef BENCH_SIM_DIR
#define BENCH_SIM_DIR "benchs/sim"
#endif

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

int usage(const char* why) {
    std::fprintf(
            stderr,
            "bench_sim: %s (see the comment at the top of "
            "benchs/sim/bench_sim.cpp)\n",
            why);
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    sim::Options o;
    o.data_dir = std::string(BENCH_SIM_DIR) + "/data";
    o.calibration = std::string(BENCH_SIM_DIR) + "/calibration.json";
    o.command = bench::command_line(argc, argv);
    std::string out = std::string(BENCH_SIM_DIR) + "/../results";
    bool deterministic = false;
    try {
        for (int i = 1; i < argc; i++) {
            const std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc) {
                    throw std::invalid_argument(a + " needs a value");
                }
                return argv[++i];
            };
            if (a == "--out") {
                out = next();
            } else if (a == "--parts") {
                o.parts = split(next());
            } else if (a == "--calibration") {
                o.calibration = next();
            } else if (a == "--l3-ns-per-byte") {
                o.l3_ns_per_byte = std::stod(next());
            } else if (a == "--dram-ns-per-byte") {
                o.dram_ns_per_byte = std::stod(next());
            } else if (a == "--task-overhead-ns") {
                o.task_overhead_ns = std::stod(next());
            } else if (a == "--data") {
                o.data_dir = next();
            } else if (a == "--block-kb") {
                o.ivf_block_bytes = uint32_t(std::stoul(next()) * 1024);
            } else if (a == "--warmup-s") {
                o.warmup_s = std::stod(next());
            } else if (a == "--measure-s") {
                o.measure_s = std::stod(next());
            } else if (a == "--drift-rotate-s") {
                o.drift_rotate_s = std::stod(next());
            } else if (a == "--drift-measure-s") {
                o.drift_measure_s = std::stod(next());
            } else if (a == "--no-sweeps") {
                o.sweeps = false;
            } else if (a == "--seed") {
                o.seed = std::stoull(next());
            } else if (a == "--quick") {
                o.quick = true;
            } else if (a == "--deterministic") {
                deterministic = true;
            } else {
                return usage(("unknown option " + a).c_str());
            }
        }
        for (const std::string& p : o.parts) {
            sim::part_by_name(p); // throws on a bad name
        }
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
    } catch (const std::exception& e) {
        return usage(e.what());
    }

    const double t0 = bench::now_s();
    sim::Report rep;
    try {
        rep = sim::build_report(o, stderr);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_sim: %s\n", e.what());
        return 1;
    }
    rep.wall_s = bench::now_s() - t0;
    rep.print();
    mkdir(out.c_str(), 0777);
    const std::string path = out + "/sim.json";
    std::ofstream f(path);
    f << rep.json(deterministic);
    if (!f) {
        std::fprintf(stderr, "bench_sim: cannot write %s\n", path.c_str());
        return 1;
    }
    std::printf(
            "bench_sim: wrote %s (render: python3 -m "
            "faiss.contrib.ccd.report %s)\n",
            path.c_str(),
            path.c_str());
    return 0;
}
