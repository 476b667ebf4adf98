#include <faiss/ccd_scheduler/StealPolicy.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <stdexcept>

namespace faiss {
namespace ccd {

const char* policy_name(PolicyKind kind) {
    switch (kind) {
        case PolicyKind::ccd:
            return "ccd";
        case PolicyKind::flat_steal:
            return "flat";
        case PolicyKind::round_robin:
            return "rr";
    }
    return "?";
}

PolicyKind policy_from_name(const std::string& name) {
    std::string s;
    for (char c : name) {
        s += char(std::tolower(static_cast<unsigned char>(c)));
    }
    if (s == "ccd") {
        return PolicyKind::ccd;
    }
    if (s == "flat" || s == "flat_steal" || s == "flatsteal") {
        return PolicyKind::flat_steal;
    }
    if (s == "rr" || s == "round_robin" || s == "roundrobin") {
        return PolicyKind::round_robin;
    }
    throw std::invalid_argument(
            "unknown pool policy \"" + name +
            "\": expected \"ccd\", \"flat\" or \"rr\"");
}

Permutation::Permutation(int n, uint64_t seed) : n_(n) {
    if (n <= 0) {
        start_ = 0;
        stride_ = 1;
        return;
    }
    start_ = seed % uint64_t(n);
    // First stride >= a seed-chosen value that is coprime to n; the loop
    // ends because n + 1 is always coprime to n.
    uint64_t s = 1 + (seed >> 32) % uint64_t(n);
    while (std::gcd(s, uint64_t(n)) != 1) {
        s++;
    }
    stride_ = s;
}

StealPolicy::StealPolicy(
        const Topology& topology,
        PolicyKind kind,
        StealConfig config)
        : kind_(kind),
          config_(config),
          near_(topology.num_workers()),
          remote_(topology.num_workers()) {
    if ((config.cross_ccd_threshold < 0 &&
         config.cross_ccd_threshold != StealConfig::kCcdWorkers) ||
        config.max_backoff_shift < 0 || config.max_backoff_shift > 30) {
        throw std::invalid_argument(
                "StealConfig: cross_ccd_threshold must be >= 0 or "
                "kCcdWorkers (-1), and max_backoff_shift in [0, 30]");
    }
    for (int c = 0; c < topology.num_ccds(); c++) {
        threshold_.push_back(
                config.cross_ccd_threshold == StealConfig::kCcdWorkers
                        ? int64_t(topology.ccd_size(c))
                        : config.cross_ccd_threshold);
    }
    const int nw = topology.num_workers();
    for (int w = 0; w < nw; w++) {
        const int home = topology.ccd_of(w);
        switch (kind) {
            case PolicyKind::ccd:
                for (int v = topology.first_worker(home);
                     v < topology.first_worker(home) + topology.ccd_size(home);
                     v++) {
                    if (v != w) {
                        near_[w].push_back(v);
                    }
                }
                for (int c = 0; c < topology.num_ccds(); c++) {
                    if (c != home) {
                        remote_[w].push_back(c);
                    }
                }
                break;
            case PolicyKind::flat_steal:
                for (int v = 0; v < nw; v++) {
                    if (v != w) {
                        near_[w].push_back(v);
                    }
                }
                break;
            case PolicyKind::round_robin:
                break;
        }
    }
}

} // namespace ccd
} // namespace faiss
