#include "workload.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace sim {

double Rng::normal() {
    double u = uniform();
    while (u <= 0) {
        u = uniform();
    }
    const double v = uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

Discrete::Discrete(const std::vector<double>& weights) {
    cdf_.resize(weights.size());
    std::partial_sum(weights.begin(), weights.end(), cdf_.begin());
}

size_t Discrete::draw(Rng& rng) const {
    const double x = rng.uniform() * cdf_.back();
    const size_t i = size_t(
            std::upper_bound(cdf_.begin(), cdf_.end(), x) - cdf_.begin());
    return std::min(i, cdf_.size() - 1);
}

std::vector<double> zipf_weights(size_t n, double s) {
    std::vector<double> w(n);
    for (size_t i = 0; i < n; i++) {
        w[i] = 1.0 / std::pow(double(i + 1), s);
    }
    return w;
}

namespace {
/// shuffled: 0..n-1 in a seeded random order (Fisher-Yates).
std::vector<uint32_t> shuffled(size_t n, uint64_t seed) {
    std::vector<uint32_t> v(n);
    std::iota(v.begin(), v.end(), 0);
    Rng rng(seed);
    for (size_t i = n; i > 1; i--) {
        std::swap(v[i - 1], v[rng.below(i)]);
    }
    return v;
}

/// rotation_shift: how far a drifting workload's ranking of n items has
/// moved at time t_s: n/4 ranks (at least 1) every rotate_s seconds; 0
/// when it does not drift.
size_t rotation_shift(double t_s, double rotate_s, size_t n) {
    return rotate_s > 0 ? size_t(t_s / rotate_s) * std::max<size_t>(1, n / 4)
                        : 0;
}
} // namespace

uint64_t Workload::total_bytes() const {
    return std::accumulate(item_bytes_.begin(), item_bytes_.end(), uint64_t(0));
}

uint32_t Workload::num_blocks(uint32_t item) const {
    return uint32_t((item_bytes_[item] + block_size_ - 1) / block_size_);
}

uint32_t Workload::block_bytes(uint32_t item, uint32_t b) const {
    const uint64_t start = uint64_t(b) * block_size_;
    return uint32_t(std::min<uint64_t>(block_size_, item_bytes_[item] - start));
}

// ---- IVF ---------------------------------------------------------------

IvfWorkload::IvfWorkload(const IvfConfig& config) : config_(config) {
    std::ifstream in(config.lists_file);
    if (!in) {
        throw std::runtime_error("cannot read " + config.lists_file);
    }
    std::string line;
    int nlist = 0, file_nprobe = 0;
    std::vector<double> probes;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        std::istringstream fields(line);
        if (nlist == 0) {
            fields >> d_ >> nlist >> file_nprobe;
            continue;
        }
        uint64_t size = 0, count = 0;
        fields >> size >> count;
        // IVFFlat: d floats and one 8-byte id per vector.
        item_bytes_.push_back(size * (uint64_t(d_) * 4 + 8));
        probes.push_back(double(count));
    }
    if (nlist == 0 || int(item_bytes_.size()) != nlist) {
        throw std::runtime_error(config.lists_file + ": malformed");
    }
    const size_t slash = config.lists_file.find_last_of('/');
    data_name_ = config.lists_file.substr(slash + 1);
    data_name_ = data_name_.substr(0, data_name_.find('.'));
    nprobe_ = config.nprobe > 0 ? config.nprobe : file_nprobe;
    nprobe_ = std::min(nprobe_, nlist);
    block_size_ = config.block_bytes;
    if (config.measured_popularity) {
        // Rank = the lists by measured probes, hottest first (+1 so that
        // a never-probed list can still be drawn, rarely).
        order_.resize(nlist);
        std::iota(order_.begin(), order_.end(), 0);
        std::stable_sort(order_.begin(), order_.end(), [&](auto a, auto b) {
            return probes[a] > probes[b];
        });
        std::vector<double> w(nlist);
        for (int r = 0; r < nlist; r++) {
            w[r] = probes[order_[r]] + 1;
        }
        popularity_ = Discrete(w);
    } else {
        order_ = shuffled(nlist, config.seed * 7919 + 1);
        popularity_ = Discrete(zipf_weights(nlist, config.zipf));
    }
}

std::string IvfWorkload::name() const {
    std::ostringstream s;
    s << "ivf-" << data_name_ << " nprobe " << nprobe_ << ", "
      << (config_.measured_popularity
                  ? std::string("measured popularity")
                  : "zipf " + std::to_string(config_.zipf).substr(0, 4));
    if (config_.rotate_s > 0) {
        s << ", hot set rotates every " << config_.rotate_s << " s";
    }
    return s.str();
}

void IvfWorkload::query(Rng& rng, double t_s, std::vector<TaskSpec>* out)
        const {
    const size_t n = order_.size();
    const size_t shift = rotation_shift(t_s, config_.rotate_s, n);
    out->clear();
    // Distinct lists: redraw duplicates a bounded number of times, then
    // take the next list in rank order (a hot rank repeats often).
    for (int p = 0; p < nprobe_; p++) {
        uint32_t list = 0;
        for (int attempt = 0;; attempt++) {
            size_t rank = popularity_.draw(rng);
            if (attempt >= 32) {
                rank = rng.below(n);
            }
            list = order_[(rank + shift) % n];
            bool dup = false;
            for (const TaskSpec& t : *out) {
                dup |= t.item == list;
            }
            if (!dup) {
                break;
            }
        }
        TaskSpec t;
        t.item = list;
        t.nblocks = num_blocks(list);
        out->push_back(t);
    }
}

// ---- HNSW --------------------------------------------------------------

HnswWorkload::HnswWorkload(const HnswConfig& config) : config_(config) {
    // A node: its vector and its base-layer links (2M neighbours of 4 B).
    const uint64_t node_bytes = uint64_t(config.d) * 4 + 2 * config.M * 4;
    block_size_ = uint32_t(node_bytes * config.nodes_per_block);
    for (int t = 0; t < config.tables; t++) {
        item_bytes_.push_back(node_bytes * config.nodes);
    }
    order_ = shuffled(config.tables, config.seed * 104729 + 3);
    tables_ = Discrete(zipf_weights(config.tables, config.table_zipf));
    const uint32_t nblocks = (config.nodes + config.nodes_per_block - 1) /
            config.nodes_per_block;
    blocks_ = Discrete(zipf_weights(nblocks, config.node_zipf));
}

std::string HnswWorkload::name() const {
    std::ostringstream s;
    s << "hnsw " << config_.tables << " tables x " << config_.nodes
      << " nodes, d " << config_.d << ", table zipf " << config_.table_zipf
      << " (hottest " << int(100 * hottest_share() + 0.5) << "%)";
    if (config_.rotate_s > 0) {
        s << ", hot set rotates every " << config_.rotate_s << " s";
    }
    return s.str();
}

double HnswWorkload::hottest_share() const {
    const std::vector<double> w =
            zipf_weights(config_.tables, config_.table_zipf);
    return w[0] / std::accumulate(w.begin(), w.end(), 0.0);
}

void HnswWorkload::query(Rng& rng, double t_s, std::vector<TaskSpec>* out)
        const {
    const size_t n = order_.size();
    const size_t shift = rotation_shift(t_s, config_.rotate_s, n);
    out->clear();
    TaskSpec t;
    t.item = order_[(tables_.draw(rng) + shift) % n];
    // Lognormal node count with the configured mean.
    const double s = config_.nodes_sigma;
    const double nodes =
            config_.mean_nodes * std::exp(s * rng.normal() - 0.5 * s * s);
    t.nblocks = std::max<uint32_t>(
            1,
            uint32_t(nodes / config_.nodes_per_block + 0.5));
    t.seed = rng.next();
    out->push_back(t);
}

uint32_t HnswWorkload::block_of(const TaskSpec& task, uint32_t i) const {
    Rng r(task.seed + 0x632be59bd9b4e019ULL * (uint64_t(i) + 1));
    return uint32_t(blocks_.draw(r));
}

} // namespace sim
