/**
 * workload.h: the drifting Zipf workload of bench_mapping.
 *
 * Ids: 15 tables x 8192 IVF lists. Index i (0 <= i < N) is list i % 8192 of
 * table i / 8192, MappingId make_mapping_id(table, list). Each list has a
 * size in vectors (log-normal: median 128, sigma 0.6, at least 4) and each
 * table a code size (32, 64 or 128 bytes, by table % 3), so one scan of
 * list i moves bytes(i) = size(i) * (code_size + 8), the traffic IVF tasks
 * report (DESIGN.md, "Traffic and placement").
 *
 * Popularity: an access picks rank r with probability ~ (r + 1)^-s (Zipf,
 * s = 1.1) and touches the id at that rank. The ranking drifts: drift()
 * rotates it by `rotate` ranks (the ids ranked rotate..2*rotate-1 become
 * the hottest, the hottest go to the back), then swaps each of the top
 * `shuffle_top` ranks with a uniformly random rank with probability
 * `shuffle_p` (cold ids turn hot without warning). The caller decides when
 * to drift (bench_mapping: every 5 simulated seconds).
 *
 * Everything comes from Rng (splitmix64) with fixed seeds: the same
 * configuration gives the same accesses on every machine.
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace bench {
namespace mapping {

/// Rng: splitmix64; small, fast and the same everywhere.
class Rng {
   public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    /// uniform: in [0, 1).
    double uniform() {
        return double(next() >> 11) * 0x1.0p-53;
    }
    /// below: in [0, n).
    uint64_t below(uint64_t n) {
        return uint64_t((unsigned __int128)next() * n >> 64);
    }
    /// normal: standard normal (Box-Muller).
    double normal() {
        const double u = 1.0 - uniform(); // (0, 1]
        const double v = uniform();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(2 * M_PI * v);
    }

   private:
    uint64_t state_;
};

struct WorkloadConfig {
    uint32_t tables = 15;
    uint32_t lists = 8192;      ///< per table
    double zipf_s = 1.1;        ///< popularity exponent
    int drift_period_s = 5;     ///< simulated seconds between drift()s
    uint32_t rotate = 128;      ///< ranks the ranking rotates per drift
    uint32_t shuffle_top = 512; ///< top ranks that may swap per drift
    double shuffle_p = 0.25;    ///< probability that one of them swaps
    uint64_t seed = 42;
};

class DriftingZipf {
   public:
    explicit DriftingZipf(const WorkloadConfig& config) : config_(config) {
        const uint32_t n = config.tables * config.lists;
        Rng rng(config.seed);
        sizes_.resize(n);
        for (uint32_t i = 0; i < n; i++) {
            const double s = 128 * std::exp(0.6 * rng.normal());
            sizes_[i] = std::max<uint32_t>(4, uint32_t(std::lround(s)));
        }
        pmf_.resize(n);
        cdf_.resize(n);
        double sum = 0;
        for (uint32_t r = 0; r < n; r++) {
            pmf_[r] = std::pow(double(r + 1), -config.zipf_s);
            sum += pmf_[r];
        }
        double acc = 0;
        for (uint32_t r = 0; r < n; r++) {
            pmf_[r] /= sum;
            acc += pmf_[r];
            cdf_[r] = acc;
        }
        // The initial ranking: a seeded Fisher-Yates shuffle.
        rank_to_index_.resize(n);
        for (uint32_t i = 0; i < n; i++) {
            rank_to_index_[i] = i;
        }
        for (uint32_t i = n - 1; i > 0; i--) {
            std::swap(rank_to_index_[i], rank_to_index_[rng.below(i + 1)]);
        }
    }

    uint32_t num_ids() const {
        return uint32_t(sizes_.size());
    }
    faiss::ccd::MappingId id(uint32_t i) const {
        return faiss::ccd::make_mapping_id(
                i / config_.lists,
                i % config_.lists);
    }
    /// list_size: vectors in list i.
    uint32_t list_size(uint32_t i) const {
        return sizes_[i];
    }
    /// bytes: traffic of one scan of list i.
    uint64_t bytes(uint32_t i) const {
        const uint64_t code_size = 32u << ((i / config_.lists) % 3);
        return uint64_t(sizes_[i]) * (code_size + 8);
    }
    /// draw: the index of the next accessed list.
    uint32_t draw(Rng& rng) const {
        const double u = rng.uniform();
        size_t r = std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
        r = std::min(r, cdf_.size() - 1);
        return rank_to_index_[r];
    }
    /// drift: one step of the ranking's drift (see the file comment).
    void drift(Rng& rng) {
        const uint32_t n = num_ids();
        std::rotate(
                rank_to_index_.begin(),
                rank_to_index_.begin() + config_.rotate % n,
                rank_to_index_.end());
        for (uint32_t r = 0; r < std::min(config_.shuffle_top, n); r++) {
            if (rng.uniform() < config_.shuffle_p) {
                std::swap(rank_to_index_[r], rank_to_index_[rng.below(n)]);
            }
        }
    }
    /// expected_bytes: per index, the expected traffic of `accesses`
    /// accesses under the current ranking (at least 1 byte per id).
    std::vector<uint64_t> expected_bytes(double accesses) const {
        std::vector<uint64_t> out(num_ids());
        for (uint32_t r = 0; r < num_ids(); r++) {
            const uint32_t i = rank_to_index_[r];
            out[i] = std::max<uint64_t>(
                    1,
                    uint64_t(accesses * pmf_[r] * double(bytes(i))));
        }
        return out;
    }
    const WorkloadConfig& config() const {
        return config_;
    }

   private:
    WorkloadConfig config_;
    std::vector<uint32_t> sizes_;         ///< per index
    std::vector<double> pmf_;             ///< per rank
    std::vector<double> cdf_;             ///< per rank
    std::vector<uint32_t> rank_to_index_; ///< the current ranking
};

} // namespace mapping
} // namespace bench
