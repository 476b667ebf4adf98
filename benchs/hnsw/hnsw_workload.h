/**
 * hnsw_workload.h: the tables and the query stream of bench_hnsw.
 *
 * Tables: `num_tables` HNSW tables, table 0 Fashion-MNIST (784 dimensions,
 * when Debian's dataset-fashion-mnist is installed), the others synthetic
 * clustered data, sizes log-uniform in [min_size, max_size] times `scale`,
 * dimensions drawn from 64..256, every 4th one HNSW-SQ8, the rest
 * HNSW-Flat. Everything is a function of the seed. Built indexes are cached
 * in `cache_dir` (faiss::write_index), keyed by everything that shapes
 * them, so a second run loads instead of building.
 *
 * Queries: per table a pool of queries from the table's distribution
 * (Fashion-MNIST: test images). Per client a fixed sequence of (table,
 * query): tables Zipf-distributed over a seeded random ranking (so hot
 * tables have random sizes), queries uniform. Every contender replays the
 * same sequences from the start.
 */

#pragma once

#include <faiss/IndexHNSW.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bench {

struct WorkloadConfig {
    int num_tables = 60;
    int64_t min_size = 5000; ///< the issue's sizes, before `scale`
    int64_t max_size = 100000;
    double scale = 0.05;     ///< sizes actually built: size * scale
    int64_t min_built = 200; ///< no table smaller than this
    std::vector<int> dims = {64, 96, 128, 160, 192, 224, 256};
    bool fashion_mnist = true; ///< table 0 is Fashion-MNIST when available
    int M = 16;
    int ef_construction = 40;
    int ef_search = 32;
    int queries_per_table = 100;
    uint64_t seed = 12345;
    std::string cache_dir; ///< "" = no cache
};

struct TableInfo {
    std::string name;  ///< e.g. "t07-flat-d128-n2315", "fashion-mnist"
    std::string codec; ///< "Flat" or "SQ8"
    int d = 0;
    int64_t n = 0;
    bool from_cache = false;
    double build_s = 0; ///< build (or load) time
};

struct Workload {
    std::vector<std::unique_ptr<faiss::IndexHNSW>> indexes;
    std::vector<TableInfo> info;
    std::vector<std::vector<float>> queries; ///< per table, row-major
    std::string note; ///< e.g. "Fashion-MNIST not installed: synthetic"

    int num_tables() const {
        return int(indexes.size());
    }
    const float* query(int table, int q) const {
        return queries[table].data() + size_t(q) * info[table].d;
    }
};

/// make_dirs: mkdir -p.
void make_dirs(const std::string& path);

/// build_workload: builds (or loads from the cache) every table; prints
/// progress to stderr.
Workload build_workload(const WorkloadConfig& config);

/// QueryStream: one client's sequence of (table, query).
struct QueryStream {
    std::vector<uint32_t> table;
    std::vector<uint32_t> query;
};

/// zipf_ranking: table ids from hottest to coldest (a seeded permutation).
std::vector<int> zipf_ranking(int num_tables, uint64_t seed);

/// zipf_weights: the share of queries of each table (sums to 1).
std::vector<double> zipf_weights(
        const std::vector<int>& ranking,
        double exponent);

/// make_streams: `clients` sequences of `length` queries each.
std::vector<QueryStream> make_streams(
        const std::vector<double>& weights,
        int queries_per_table,
        int clients,
        size_t length,
        uint64_t seed);

} // namespace bench
