#include "memory.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sim {

Part part_by_name(const std::string& name, const ScanCosts& costs) {
    if (name == "genoa96") {
        return genoa96();
    }
    if (name == "rome48") {
        return rome48();
    }
    if (name == "host") {
        if (costs.host.ccds <= 0) {
            throw std::invalid_argument(
                    "part \"host\" wants a calibration with host_* keys "
                    "(calibrate_scan prints them)");
        }
        return costs.host;
    }
    throw std::invalid_argument(
            "unknown part \"" + name + "\": expected genoa96, rome48 or host");
}

namespace {
/// find_number: the number after "key": in a flat JSON text, if any.
bool find_number(const std::string& text, const std::string& key, double* v) {
    const size_t at = text.find("\"" + key + "\"");
    if (at == std::string::npos) {
        return false;
    }
    const size_t colon = text.find(':', at);
    if (colon == std::string::npos) {
        return false;
    }
    std::istringstream in(text.substr(colon + 1));
    double x;
    if (!(in >> x)) {
        return false; // null or a string: keep the default
    }
    *v = x;
    return true;
}

bool find_string(
        const std::string& text,
        const std::string& key,
        std::string* v) {
    const size_t at = text.find("\"" + key + "\"");
    if (at == std::string::npos) {
        return false;
    }
    const size_t open = text.find('"', text.find(':', at));
    const size_t close = text.find('"', open + 1);
    if (open == std::string::npos || close == std::string::npos) {
        return false;
    }
    *v = text.substr(open + 1, close - open - 1);
    return true;
}
} // namespace

ScanCosts load_calibration(const std::string& path, ScanCosts base) {
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error("cannot read calibration file " + path);
    }
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    find_number(text, "l3_ns_per_byte", &base.l3_ns_per_byte);
    find_number(text, "dram_ns_per_byte", &base.dram_ns_per_byte);
    find_number(text, "task_overhead_ns", &base.task_overhead_ns);
    double ccds = 0, cores = 0, l3_mb = 0, gbps = 0;
    if (find_number(text, "host_ccds", &ccds) &&
        find_number(text, "host_cores_per_ccd", &cores) &&
        find_number(text, "host_l3_mb", &l3_mb) &&
        find_number(text, "host_dram_gbps", &gbps)) {
        if (ccds < 1 || cores < 1 || l3_mb <= 0 || gbps <= 0) {
            throw std::runtime_error(path + ": host_* keys out of range");
        }
        Part& h = base.host;
        h.name = "host";
        h.ccds = int(ccds);
        h.cores_per_ccd = int(cores);
        h.l3_bytes = uint64_t(l3_mb * (1 << 20));
        h.dram_gbps = gbps;
        h.dram_efficiency = 1; // measured, all cores at once
        // Unmeasured here; unused for IVF on one L3 domain (no cross-CCD
        // steals) and only by random-access (HNSW) tasks: Zen 4's values.
        h.cross_ccd_ns = genoa96().cross_ccd_ns;
        h.l3_latency_ns = genoa96().l3_latency_ns;
        h.dram_latency_ns = genoa96().dram_latency_ns;
    }
    std::string source;
    base.source = find_string(text, "source", &source) ? source : path;
    return base;
}

} // namespace sim
