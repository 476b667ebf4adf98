/**
 * workload: what the simulated clients ask for.
 *
 * An item is a unit of memory a task touches and the placement keys on:
 * an IVF list (MappingId = table 1, list i) or an HNSW table (MappingId =
 * table i). Each item is a run of blocks; a task reads some of them.
 *
 * IvfWorkload: list sizes of a real index (tools/scale_model/data/*.lists); a
 * query probes `nprobe` distinct lists drawn by popularity: a Zipf law of
 * exponent `zipf` over a seeded random order of the lists, or the measured
 * probe counts of the data set's own queries (popularity = "measured").
 * Drift: every `rotate_s` seconds the popularity order shifts by a quarter
 * of the lists, so a new hot set replaces the old one (the scheme of
 * contrib/datasets.py's SkewedSynthetic.query_trace). A task scans its
 * whole list, sequentially.
 * HnswWorkload: `tables` tables of `nodes` nodes; a query goes to one
 * table drawn by a Zipf law (exponent `table_zipf`), touches a lognormal
 * number of nodes (mean `mean_nodes`, sigma `nodes_sigma`: skewed
 * per-query cost), each node drawn by a Zipf law over the table's nodes
 * (upper layers and hubs are visited by most queries). Nodes are grouped
 * by hotness rank into blocks of `nodes_per_block`. Random access.
 */

#pragma once

#include <faiss/ccd_scheduler/MappingId.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sim {

/// Rng: splitmix64; the one random source of the simulator (portable: the
/// standard library's distributions differ between implementations).
class Rng {
   public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next() {
        uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    /// uniform: in [0, 1).
    double uniform() {
        return double(next() >> 11) * (1.0 / 9007199254740992.0);
    }
    /// below: in [0, n).
    uint64_t below(uint64_t n) {
        return uint64_t(uniform() * double(n));
    }
    /// normal: standard normal (Box-Muller).
    double normal();

   private:
    uint64_t s_;
};

/// Discrete: draws an index with probability proportional to weights.
class Discrete {
   public:
    Discrete() = default;
    explicit Discrete(const std::vector<double>& weights);
    size_t draw(Rng& rng) const;
    size_t size() const {
        return cdf_.size();
    }

   private:
    std::vector<double> cdf_;
};

/// zipf_weights: 1/(rank+1)^s for rank 0..n-1.
std::vector<double> zipf_weights(size_t n, double s);

/// TaskSpec: one task of a query: read `nblocks` blocks of `item`
/// (sequentially from block 0 when random_blocks is false, else drawn by
/// the workload from `seed`).
struct TaskSpec {
    uint32_t item = 0;
    uint32_t nblocks = 0;
    uint64_t seed = 0;
};

class Workload {
   public:
    virtual ~Workload() = default;
    virtual std::string name() const = 0;
    size_t num_items() const {
        return item_bytes_.size();
    }
    uint64_t item_bytes(uint32_t item) const {
        return item_bytes_[item];
    }
    uint64_t total_bytes() const;
    virtual faiss::ccd::MappingId id_of(uint32_t item) const = 0;
    /// block_bytes: the bytes of block b of item (the last may be short).
    uint32_t block_bytes(uint32_t item, uint32_t b) const;
    uint32_t num_blocks(uint32_t item) const;
    uint32_t block_size() const {
        return block_size_;
    }
    /// random_access: tasks read scattered blocks (latency-bound) rather
    /// than streaming (bandwidth-bound).
    virtual bool random_access() const = 0;
    /// query: the tasks of one query issued at time t_s (seconds).
    virtual void query(Rng& rng, double t_s, std::vector<TaskSpec>* out)
            const = 0;
    /// block_of: the i-th block a random-access task reads.
    virtual uint32_t block_of(const TaskSpec& task, uint32_t i) const = 0;
    /// client_ns: per query, work on the client's own core before the
    /// tasks are submitted (the IVF coarse quantizer), in scanned bytes.
    virtual uint64_t client_bytes() const {
        return 0;
    }

   protected:
    std::vector<uint64_t> item_bytes_;
    uint32_t block_size_ = 65536;
};

struct IvfConfig {
    std::string lists_file; ///< tools/scale_model/data/<name>.lists
    int nprobe = 0;         ///< 0: the file's
    double zipf = 1.1;      ///< popularity exponent over lists
    bool measured_popularity = false;
    double rotate_s = 0; ///< 0: no drift
    uint32_t block_bytes = 65536;
    uint64_t seed = 1;
};

class IvfWorkload final : public Workload {
   public:
    /// IvfWorkload: throws std::runtime_error when the file is unreadable.
    explicit IvfWorkload(const IvfConfig& config);
    std::string name() const override;
    faiss::ccd::MappingId id_of(uint32_t item) const override {
        return faiss::ccd::make_mapping_id(1, item);
    }
    bool random_access() const override {
        return false;
    }
    void query(Rng& rng, double t_s, std::vector<TaskSpec>* out) const override;
    uint32_t block_of(const TaskSpec&, uint32_t i) const override {
        return i;
    }
    uint64_t client_bytes() const override {
        return uint64_t(d_) * 4 * item_bytes_.size();
    }
    int nprobe() const {
        return nprobe_;
    }

   private:
    IvfConfig config_;
    std::string data_name_;
    int d_ = 0;
    int nprobe_ = 0;
    std::vector<uint32_t> order_; ///< popularity rank -> list
    Discrete popularity_;         ///< over ranks
};

struct HnswConfig {
    int tables = 24;
    uint32_t nodes = 30000;
    int d = 784; ///< Fashion-MNIST's dimension
    int M = 16;
    double table_zipf = 0.9;
    double node_zipf = 0.9;
    double mean_nodes = 1000;
    double nodes_sigma = 0.6;
    uint32_t nodes_per_block = 16;
    double rotate_s = 0; ///< drift of the table popularity order
    uint64_t seed = 1;
};

class HnswWorkload final : public Workload {
   public:
    explicit HnswWorkload(const HnswConfig& config);
    std::string name() const override;
    faiss::ccd::MappingId id_of(uint32_t item) const override {
        return faiss::ccd::make_mapping_id(item + 1, 0);
    }
    bool random_access() const override {
        return true;
    }
    void query(Rng& rng, double t_s, std::vector<TaskSpec>* out) const override;
    uint32_t block_of(const TaskSpec& task, uint32_t i) const override;
    /// hottest_share: the top table's share of the queries.
    double hottest_share() const;

   private:
    HnswConfig config_;
    std::vector<uint32_t> order_; ///< popularity rank -> table
    Discrete tables_;
    Discrete blocks_; ///< over a table's blocks, hottest first
};

} // namespace sim
