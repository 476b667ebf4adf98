#include "hnsw/hnsw_workload.h"

#include "fashion_mnist.h"

#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <faiss/utils/utils.h>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace bench {

namespace {

/// Synthetic: the distribution of one synthetic table: gaussian blobs.
struct Synthetic {
    int d;
    std::vector<float> centers; ///< kCenters * d

    static constexpr int kCenters = 32;

    Synthetic(int d_in, uint64_t seed) : d(d_in), centers(kCenters * d_in) {
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> g(0, 3);
        for (float& v : centers) {
            v = g(rng);
        }
    }
    std::vector<float> sample(int64_t n, uint64_t seed) const {
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> g(0, 1);
        std::vector<float> x(size_t(n) * d);
        for (int64_t i = 0; i < n; i++) {
            const float* c = &centers[(rng() % kCenters) * d];
            for (int j = 0; j < d; j++) {
                x[size_t(i) * d + j] = c[j] + g(rng);
            }
        }
        return x;
    }
};

bool file_exists(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

/// build_or_load: the index from the cache, or built from base() and
/// written to the cache.
template <class Base>
std::unique_ptr<faiss::IndexHNSW>
build_or_load(const WorkloadConfig& config, TableInfo& info, Base base) {
    const std::string path = config.cache_dir.empty()
            ? ""
            : config.cache_dir + "/" + info.name + ".faissindex";
    const double t0 = faiss::getmillisecs();
    std::unique_ptr<faiss::Index> index;
    if (!path.empty() && file_exists(path)) {
        index.reset(faiss::read_index(path.c_str()));
        info.from_cache = true;
    } else {
        const std::string key = "HNSW" + std::to_string(config.M) +
                (info.codec == "SQ8" ? ",SQ8" : "");
        index.reset(faiss::index_factory(info.d, key.c_str()));
        auto* hnsw = dynamic_cast<faiss::IndexHNSW*>(index.get());
        hnsw->hnsw.efConstruction = config.ef_construction;
        const std::vector<float> x = base();
        if (!index->is_trained) {
            index->train(info.n, x.data());
        }
        index->add(info.n, x.data());
        if (!path.empty()) {
            faiss::write_index(index.get(), (path + ".tmp").c_str());
            std::rename((path + ".tmp").c_str(), path.c_str());
        }
    }
    info.build_s = (faiss::getmillisecs() - t0) / 1000;
    auto* hnsw = dynamic_cast<faiss::IndexHNSW*>(index.get());
    if (hnsw == nullptr || hnsw->ntotal != info.n || hnsw->d != info.d) {
        throw std::runtime_error(
                "bench_hnsw: bad index for " + info.name +
                (path.empty() ? "" : " (cache " + path + ")"));
    }
    hnsw->hnsw.efSearch = config.ef_search;
    index.release();
    return std::unique_ptr<faiss::IndexHNSW>(hnsw);
}

} // namespace

void make_dirs(const std::string& path) {
    for (size_t i = 1; i <= path.size(); i++) {
        if (i == path.size() || path[i] == '/') {
            mkdir(path.substr(0, i).c_str(), 0755); // EEXIST is fine
        }
    }
}

Workload build_workload(const WorkloadConfig& config) {
    if (!config.cache_dir.empty()) {
        make_dirs(config.cache_dir);
    }
    Workload w;
    std::mt19937_64 rng(config.seed);
    const double log_min = std::log(double(config.min_size));
    const double log_max = std::log(double(config.max_size));
    const std::string shape = "-M" + std::to_string(config.M) + "-efc" +
            std::to_string(config.ef_construction) + "-s" +
            std::to_string(config.seed);
    for (int t = 0; t < config.num_tables; t++) {
        // Drawn for every table, used or not, so that the synthetic tables
        // do not depend on whether Fashion-MNIST is installed.
        const double u = std::uniform_real_distribution<double>(0, 1)(rng);
        const int d = config.dims[rng() % config.dims.size()];
        const uint64_t table_seed = rng();
        TableInfo info;
        if (t == 0 && config.fashion_mnist) {
            const int64_t n = std::clamp(
                    int64_t(std::llround(60000 * config.scale)),
                    config.min_built,
                    int64_t(60000));
            auto train = fashion_mnist::load_images(
                    fashion_mnist::path("train-images-idx3-ubyte.gz"),
                    int(n));
            auto test = fashion_mnist::load_images(
                    fashion_mnist::path("t10k-images-idx3-ubyte.gz"),
                    config.queries_per_table);
            if (train.n == n && test.n == config.queries_per_table) {
                info.name = "fashion-mnist-n" + std::to_string(n) + shape;
                info.codec = "Flat";
                info.d = train.d;
                info.n = n;
                w.indexes.push_back(build_or_load(config, info, [&] {
                    return train.x;
                }));
                w.queries.push_back(std::move(test.x));
                w.info.push_back(info);
                fprintf(stderr,
                        "  table %2d %-40s %s %.1f s\n",
                        t,
                        info.name.c_str(),
                        info.from_cache ? "loaded" : "built",
                        info.build_s);
                continue;
            }
            w.note = "Fashion-MNIST not found under " +
                    std::string(fashion_mnist::kDir) + ": table 0 is synthetic";
        }
        const int64_t size =
                int64_t(std::exp(log_min + u * (log_max - log_min)));
        info.n = std::max(
                config.min_built,
                int64_t(std::llround(size * config.scale)));
        info.d = d;
        info.codec = t % 4 == 3 ? "SQ8" : "Flat";
        char name[96];
        snprintf(
                name,
                sizeof(name),
                "t%02d-%s-d%d-n%lld",
                t,
                info.codec == "SQ8" ? "sq8" : "flat",
                d,
                (long long)info.n);
        info.name = name + shape;
        const Synthetic dist(d, table_seed);
        w.indexes.push_back(build_or_load(config, info, [&] {
            return dist.sample(info.n, table_seed + 1);
        }));
        w.queries.push_back(
                dist.sample(config.queries_per_table, table_seed + 2));
        w.info.push_back(info);
        fprintf(stderr,
                "  table %2d %-40s %s %.1f s\n",
                t,
                info.name.c_str(),
                info.from_cache ? "loaded" : "built",
                info.build_s);
    }
    return w;
}

std::vector<int> zipf_ranking(int num_tables, uint64_t seed) {
    std::vector<int> ranking(num_tables);
    for (int i = 0; i < num_tables; i++) {
        ranking[i] = i;
    }
    std::mt19937_64 rng(seed);
    std::shuffle(ranking.begin(), ranking.end(), rng);
    return ranking;
}

std::vector<double> zipf_weights(
        const std::vector<int>& ranking,
        double exponent) {
    std::vector<double> w(ranking.size());
    double sum = 0;
    for (size_t r = 0; r < ranking.size(); r++) {
        w[ranking[r]] = 1.0 / std::pow(double(r + 1), exponent);
        sum += w[ranking[r]];
    }
    for (double& v : w) {
        v /= sum;
    }
    return w;
}

std::vector<QueryStream> make_streams(
        const std::vector<double>& weights,
        int queries_per_table,
        int clients,
        size_t length,
        uint64_t seed) {
    std::vector<double> cdf(weights.size());
    double acc = 0;
    for (size_t t = 0; t < weights.size(); t++) {
        acc += weights[t];
        cdf[t] = acc;
    }
    std::vector<QueryStream> streams(clients);
    for (int c = 0; c < clients; c++) {
        std::mt19937_64 rng(seed + 1000003 * uint64_t(c + 1));
        std::uniform_real_distribution<double> u(0, acc);
        QueryStream& s = streams[c];
        s.table.resize(length);
        s.query.resize(length);
        for (size_t i = 0; i < length; i++) {
            const size_t t = std::min(
                    size_t(std::upper_bound(cdf.begin(), cdf.end(), u(rng)) -
                           cdf.begin()),
                    cdf.size() - 1);
            s.table[i] = uint32_t(t);
            s.query[i] = uint32_t(rng() % uint64_t(queries_per_table));
        }
    }
    return streams;
}

} // namespace bench
