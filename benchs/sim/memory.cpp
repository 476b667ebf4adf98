#include "memory.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sim {

Part part_by_name(const std::string& name) {
    if (name == "genoa96") {
        return genoa96();
    }
    if (name == "rome48") {
        return rome48();
    }
    throw std::invalid_argument(
            "unknown part \"" + name + "\": expected genoa96 or rome48");
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
    std::string source;
    base.source = find_string(text, "source", &source) ? source : path;
    return base;
}

} // namespace sim
