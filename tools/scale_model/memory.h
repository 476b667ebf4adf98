/**
 * memory: the parts bench_sim models and what a byte costs on them.
 *
 * Part: the shape and the memory system of one CPU, from the vendor's
 * specification (cores, L3 domains, L3 per domain, DRAM channels) and one
 * published latency measurement; docs/SIMULATION.md cites each number.
 * ScanCosts: per-byte scan costs measured on a real machine
 * (calibrate_scan.cpp -> calibration.json); they are inputs, never fitted
 * to the paper.
 * Dram: the DRAM bandwidth all cores share. A task that streams from DRAM
 * while k tasks (itself included) do gets at most 1/k of the sustained
 * bandwidth: its per-byte cost is max(own per-core cost, k / bandwidth).
 * k is taken when the task starts and held for its duration (no
 * re-sharing when others start or end: a first-order model).
 */

#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace sim {

struct Part {
    std::string name;
    int ccds = 1;                 ///< L3 domains (the paper's "CCDs")
    int cores_per_ccd = 1;        ///< cores sharing one L3
    uint64_t l3_bytes = 0;        ///< per L3 domain
    double dram_gbps = 0;         ///< peak, channels x transfer rate x 8 B
    double dram_efficiency = 0.8; ///< sustained / peak (assumption)
    double cross_ccd_ns = 0;      ///< one cache line from a core of another CCD
    double l3_latency_ns = 10;    ///< a random-access hit in the own L3
    double dram_latency_ns = 120; ///< a random-access miss to DRAM
};

/// genoa96: AMD EPYC 9654: 96 cores, 12 CCDs x 8, 32 MB L3 per CCD,
/// 12 channels DDR5-4800 (460.8 GB/s peak).
inline Part genoa96() {
    Part p;
    p.name = "genoa96";
    p.ccds = 12;
    p.cores_per_ccd = 8;
    p.l3_bytes = uint64_t(32) << 20;
    p.dram_gbps = 12 * 4.8 * 8;
    p.cross_ccd_ns = 80; // Zen 4 cross-CCD, AnandTech's 7950X test (a floor)
    p.l3_latency_ns = 11;
    p.dram_latency_ns = 120;
    return p;
}

/// rome48: AMD EPYC 7552: 48 cores, 12 CCXs x 4 (the L3 domain of Zen 2),
/// 16 MB L3 per CCX, 8 channels DDR4-3200 (204.8 GB/s peak).
inline Part rome48() {
    Part p;
    p.name = "rome48";
    p.ccds = 12;
    p.cores_per_ccd = 4;
    p.l3_bytes = uint64_t(16) << 20;
    p.dram_gbps = 8 * 3.2 * 8;
    // Zen 2 sends a line between CCXs through the I/O die: taken as
    // AnandTech's full-random DRAM latency on Rome (NPS1), 122 ns.
    p.cross_ccd_ns = 122;
    p.l3_latency_ns = 10.3;
    p.dram_latency_ns = 122;
    return p;
}

/// ScanCosts: what scanning one byte costs one core, and the machine that
/// was measured.
struct ScanCosts {
    double l3_ns_per_byte = 0.05;   ///< data resident in L2/L3
    double dram_ns_per_byte = 0.15; ///< data streamed from DRAM, one core
    double task_overhead_ns = 500;  ///< dispatch, pop, top-k merge per task
    std::string source = "built-in defaults";
    /// host: the calibrated machine as a part (the validation's model of
    /// it): L3 domains and size from sysfs, the DRAM bandwidth all its
    /// cores measured together (so dram_efficiency 1). ccds == 0: the
    /// calibration did not describe it.
    Part host;
};

/// part_by_name: "genoa96", "rome48" or "host" (from the calibration);
/// throws std::invalid_argument.
Part part_by_name(const std::string& name, const ScanCosts& costs);

/// load_calibration: ScanCosts from a calibration.json (flat keys
/// "l3_ns_per_byte", "dram_ns_per_byte", "task_overhead_ns", "source",
/// "host_ccds", "host_cores_per_ccd", "host_l3_mb", "host_dram_gbps");
/// missing keys keep their defaults. Throws std::runtime_error when the
/// file cannot be read.
ScanCosts load_calibration(const std::string& path, ScanCosts base);

class Dram {
   public:
    explicit Dram(const Part& part)
            : bytes_per_ns_(part.dram_gbps * part.dram_efficiency) {}
    /// start_stream: a task begins reading from DRAM; returns its per-byte
    /// cost given the per-core cost alone.
    double start_stream(double per_core_ns_per_byte) {
        streams_++;
        return std::max(per_core_ns_per_byte, double(streams_) / bytes_per_ns_);
    }
    void end_stream() {
        streams_--;
    }
    int streams() const {
        return streams_;
    }

   private:
    double bytes_per_ns_; ///< 1 GB/s = 1 byte/ns
    int streams_ = 0;
};

} // namespace sim
