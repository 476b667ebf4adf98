#include "ivf_data.h"

#include "common/run_info.h"
#include "fashion_mnist.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/random.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <unordered_set>

namespace bench {
namespace ivf {

namespace {

// Bump when the generator or the build changes what a key stands for.
constexpr int kCacheVersion = 1;

/// Blobs: the synthetic set's generative model (cheap: no base vectors).
struct Blobs {
    std::vector<float> centers; ///< nblobs x d
    std::vector<size_t> first;  ///< base rows of blob b: [first[b], first[b+1])
    std::vector<float> spread;  ///< per-dimension noise of each blob
    std::vector<int> by_rank;   ///< blob of popularity rank r (Zipf order)
};

Blobs make_blobs(const SyntheticSpec& s) {
    Blobs b;
    b.centers.resize(s.nblobs * s.d);
    faiss::float_randn(b.centers.data(), b.centers.size(), int64_t(s.seed));

    std::mt19937_64 rng(s.seed + 1);
    std::normal_distribution<double> gauss(0, 1);
    std::vector<double> w(s.nblobs);
    double total = 0;
    for (double& x : w) {
        x = std::exp(s.size_sigma * gauss(rng));
        total += x;
    }
    // Sizes proportional to the weights, at least 1, summing to nb.
    std::vector<size_t> size(s.nblobs);
    size_t used = 0;
    for (size_t i = 0; i < s.nblobs; i++) {
        size[i] = std::max<size_t>(1, size_t(double(s.nb) * w[i] / total));
        used += size[i];
    }
    for (size_t i = 0; used < s.nb; i = (i + 1) % s.nblobs, used++) {
        size[i]++;
    }
    for (size_t i = 0; used > s.nb; i = (i + 1) % s.nblobs) {
        if (size[i] > 1) {
            size[i]--;
            used--;
        }
    }
    b.first.assign(s.nblobs + 1, 0);
    b.spread.resize(s.nblobs);
    const double avg = double(s.nb) / double(s.nblobs);
    for (size_t i = 0; i < s.nblobs; i++) {
        b.first[i + 1] = b.first[i] + size[i];
        // Dense big blobs: k-means gains as much from cutting a blob as
        // size * spread^2, which this keeps about constant.
        const double f = std::sqrt(avg / double(size[i]));
        b.spread[i] = float(s.spread * std::min(3.0, std::max(0.25, f)));
    }
    b.by_rank.resize(s.nblobs);
    faiss::rand_perm(b.by_rank.data(), s.nblobs, int64_t(s.seed + 4));
    return b;
}

std::vector<float> synthetic_base(const SyntheticSpec& s, const Blobs& b) {
    std::vector<float> x(s.nb * s.d);
    faiss::float_randn(x.data(), x.size(), int64_t(s.seed + 2));
    for (size_t blob = 0; blob < s.nblobs; blob++) {
        const float* c = b.centers.data() + blob * s.d;
        for (size_t i = b.first[blob]; i < b.first[blob + 1]; i++) {
            float* row = x.data() + i * s.d;
            for (int j = 0; j < s.d; j++) {
                row[j] = c[j] + b.spread[blob] * row[j];
            }
        }
    }
    return x;
}

std::vector<float> synthetic_queries(const SyntheticSpec& s, const Blobs& b) {
    // Zipf(s) over popularity ranks, by inverting the cumulative table.
    std::vector<double> cdf(s.nblobs);
    double acc = 0;
    for (size_t r = 0; r < s.nblobs; r++) {
        acc += 1.0 / std::pow(double(r + 1), s.zipf_s);
        cdf[r] = acc;
    }
    std::mt19937_64 rng(s.seed + 3);
    std::uniform_real_distribution<double> uni(0, acc);
    std::normal_distribution<float> gauss(0, 1);
    std::vector<float> q(s.nq * s.d);
    for (size_t i = 0; i < s.nq; i++) {
        const size_t r = std::lower_bound(cdf.begin(), cdf.end(), uni(rng)) -
                cdf.begin();
        const int blob = b.by_rank[std::min(r, s.nblobs - 1)];
        const float* c = b.centers.data() + size_t(blob) * s.d;
        for (int j = 0; j < s.d; j++) {
            q[i * s.d + j] = c[j] + b.spread[blob] * gauss(rng);
        }
    }
    return q;
}

/// build_ivf: "IVF<nlist>,<codec>" (L2) from index_factory, trained on
/// `ntrain` rows picked at random.
std::unique_ptr<faiss::IndexIVF> build_ivf(
        int d,
        size_t nlist,
        const std::string& codec,
        size_t nb,
        const float* base,
        size_t ntrain,
        uint64_t seed) {
    const std::string description = "IVF" + std::to_string(nlist) + "," + codec;
    std::unique_ptr<faiss::Index> made(
            faiss::index_factory(d, description.c_str()));
    auto* as_ivf = dynamic_cast<faiss::IndexIVF*>(made.get());
    if (as_ivf == nullptr) {
        throw std::runtime_error(description + " is not an IVF index");
    }
    made.release();
    std::unique_ptr<faiss::IndexIVF> ivf(as_ivf);
    ntrain = std::min(ntrain, nb);
    std::vector<float> train(ntrain * d);
    if (ntrain == nb) {
        std::copy(base, base + nb * d, train.begin());
    } else {
        std::vector<int> perm(nb);
        faiss::rand_perm(perm.data(), nb, int64_t(seed + 5));
        for (size_t i = 0; i < ntrain; i++) {
            std::copy(
                    base + size_t(perm[i]) * d,
                    base + size_t(perm[i] + 1) * d,
                    train.begin() + i * d);
        }
    }
    ivf->train(idx_t(ntrain), train.data());
    ivf->add(idx_t(nb), base);
    return ivf;
}

std::unique_ptr<faiss::IndexIVF> try_read_index(const std::string& path) {
    if (!std::filesystem::exists(path)) {
        return nullptr;
    }
    try {
        std::unique_ptr<faiss::Index> idx(faiss::read_index(path.c_str()));
        if (auto* ivf = dynamic_cast<faiss::IndexIVF*>(idx.get())) {
            idx.release();
            return std::unique_ptr<faiss::IndexIVF>(ivf);
        }
    } catch (const std::exception& e) {
        fprintf(stderr,
                "bench_ivf: cache %s unreadable (%s), rebuilding\n",
                path.c_str(),
                e.what());
    }
    return nullptr;
}

/// write_atomically: to a temporary name, then renamed into place, so an
/// interrupted run never leaves a truncated cache file behind.
template <class Writer>
void write_atomically(const std::string& path, Writer write) {
    const std::string tmp = path + ".tmp";
    try {
        std::filesystem::create_directories(
                std::filesystem::path(path).parent_path());
        write(tmp);
        std::filesystem::rename(tmp, path);
    } catch (const std::exception& e) {
        fprintf(stderr,
                "bench_ivf: could not cache %s: %s\n",
                path.c_str(),
                e.what());
    }
}

bool read_gt(
        const std::string& path,
        size_t nq,
        int k,
        std::vector<idx_t>* gt) {
    FILE* f = fopen(path.c_str(), "rb");
    if (f == nullptr) {
        return false;
    }
    uint64_t hdr[2] = {0, 0};
    bool ok = fread(hdr, sizeof(hdr), 1, f) == 1 && hdr[0] == nq &&
            hdr[1] == uint64_t(k);
    if (ok) {
        gt->resize(nq * k);
        ok = fread(gt->data(), sizeof(idx_t), gt->size(), f) == gt->size();
    }
    fclose(f);
    return ok;
}

void write_gt(
        const std::string& path,
        size_t nq,
        int k,
        const std::vector<idx_t>& gt) {
    write_atomically(path, [&](const std::string& tmp) {
        FILE* f = fopen(tmp.c_str(), "wb");
        if (f == nullptr) {
            throw std::runtime_error("cannot open " + tmp);
        }
        const uint64_t hdr[2] = {nq, uint64_t(k)};
        const bool ok = fwrite(hdr, sizeof(hdr), 1, f) == 1 &&
                fwrite(gt.data(), sizeof(idx_t), gt.size(), f) == gt.size();
        if (fclose(f) != 0 || !ok) {
            throw std::runtime_error("write failed: " + tmp);
        }
    });
}

std::vector<idx_t> exact_topk(
        int d,
        size_t nb,
        const float* base,
        size_t nq,
        const float* q,
        int k) {
    faiss::IndexFlatL2 flat(d);
    flat.add(idx_t(nb), base);
    std::vector<float> dis(nq * k);
    std::vector<idx_t> ids(nq * k);
    flat.search(idx_t(nq), q, k, dis.data(), ids.data());
    return ids;
}

/// finish: index and ground truth from the cache, or built from `base()`
/// (called at most once, and only when something is missing).
template <class BaseFn>
void index_and_gt(
        Dataset& ds,
        const std::string& key,
        size_t ntrain,
        uint64_t seed,
        size_t gt_nq,
        const std::string& cache_dir,
        BaseFn base_fn) {
    namespace fs = std::filesystem;
    ds.cache_file = (fs::path(cache_dir) / (key + ".faissindex")).string();
    const std::string gt_file = (fs::path(cache_dir) /
                                 (key + ".gt" + std::to_string(gt_nq) + "x" +
                                  std::to_string(ds.gt_k)))
                                        .string();
    ds.gt_nq = std::min(gt_nq, ds.nq);

    double t0 = now_s();
    ds.index = try_read_index(ds.cache_file);
    ds.index_from_cache = ds.index != nullptr;
    const bool gt_cached = read_gt(gt_file, ds.gt_nq, ds.gt_k, &ds.gt);
    std::vector<float> base;
    if (!ds.index_from_cache || !gt_cached) {
        fprintf(stderr,
                "bench_ivf: %s: generating/loading base vectors\n",
                ds.name.c_str());
        base = base_fn();
    }
    if (!ds.index_from_cache) {
        fprintf(stderr,
                "bench_ivf: %s: building IVF%zu,%s (train on %zu) ...\n",
                ds.name.c_str(),
                ds.nlist,
                ds.codec.c_str(),
                std::min(ntrain, ds.nb));
        ds.index = build_ivf(
                ds.d,
                ds.nlist,
                ds.codec,
                ds.nb,
                base.data(),
                ntrain,
                seed);
        write_atomically(ds.cache_file, [&](const std::string& tmp) {
            faiss::write_index(ds.index.get(), tmp.c_str());
        });
    }
    ds.build_seconds = now_s() - t0;
    ds.index->nprobe = ds.nprobe;
    fprintf(stderr,
            "bench_ivf: %s: index %s in %.1f s (%s)\n",
            ds.name.c_str(),
            ds.index_from_cache ? "loaded from cache" : "built",
            ds.build_seconds,
            ds.cache_file.c_str());

    t0 = now_s();
    if (!gt_cached) {
        ds.gt = exact_topk(
                ds.d,
                ds.nb,
                base.data(),
                ds.gt_nq,
                ds.queries.data(),
                ds.gt_k);
        write_gt(gt_file, ds.gt_nq, ds.gt_k, ds.gt);
    }
    ds.gt_seconds = now_s() - t0;
    fprintf(stderr,
            "bench_ivf: %s: ground truth for %zu queries %s (%.1f s)\n",
            ds.name.c_str(),
            ds.gt_nq,
            gt_cached ? "loaded from cache" : "computed (IndexFlatL2)",
            ds.gt_seconds);
    ds.lists = list_stats(*ds.index);
}

/// fmnist_images: the first n images of an idx3 file, as floats (the
/// tests' reader, tests/faiss/fashion_mnist.h); throws when it is missing.
std::vector<float> fmnist_images(const std::string& path, size_t n, int* d) {
    fashion_mnist::Images im = fashion_mnist::load_images(
            path,
            int(std::min<size_t>(n, size_t(1) << 30)));
    if (im.n == 0) {
        throw std::runtime_error("cannot open " + path);
    }
    *d = im.d;
    return std::move(im.x);
}

} // namespace

std::string SyntheticSpec::key() const {
    char buf[256];
    snprintf(
            buf,
            sizeof(buf),
            "synthetic-v%d-nb%zu-d%d-blobs%zu-nlist%zu-train%zu-sz%g-sp%g-"
            "seed%llu",
            kCacheVersion,
            nb,
            d,
            nblobs,
            nlist,
            ntrain,
            size_sigma,
            spread,
            (unsigned long long)seed);
    return codec == "Flat" ? std::string(buf) : std::string(buf) + "-" + codec;
}

std::string FmnistSpec::key() const {
    char buf[128];
    snprintf(
            buf,
            sizeof(buf),
            "fmnist-v%d-nb%zu-nlist%zu",
            kCacheVersion,
            nb,
            nlist);
    return codec == "Flat" ? std::string(buf) : std::string(buf) + "-" + codec;
}

Dataset make_synthetic(
        const SyntheticSpec& spec,
        size_t gt_nq,
        const std::string& cache_dir) {
    Dataset ds;
    ds.name = "synthetic";
    ds.d = spec.d;
    ds.nb = spec.nb;
    ds.nlist = spec.nlist;
    ds.nprobe = spec.nprobe;
    ds.nq = spec.nq;
    ds.codec = spec.codec;
    char buf[256];
    snprintf(
            buf,
            sizeof(buf),
            "%zu x %d gaussian blobs (%zu blobs, lognormal sizes sigma %g, "
            "spread %g), queries Zipf(%g) over blobs, seed %llu",
            spec.nb,
            spec.d,
            spec.nblobs,
            spec.size_sigma,
            spec.spread,
            spec.zipf_s,
            (unsigned long long)spec.seed);
    ds.description = buf;
    const Blobs blobs = make_blobs(spec);
    ds.queries = synthetic_queries(spec, blobs);
    index_and_gt(ds, spec.key(), spec.ntrain, spec.seed, gt_nq, cache_dir, [&] {
        return synthetic_base(spec, blobs);
    });
    return ds;
}

Dataset load_fmnist(
        const FmnistSpec& spec,
        size_t gt_nq,
        const std::string& cache_dir) {
    Dataset ds;
    ds.name = "fmnist";
    ds.nlist = spec.nlist;
    ds.nprobe = spec.nprobe;
    ds.codec = spec.codec;
    const std::string base_path = spec.dir + "/train-images-idx3-ubyte.gz";
    ds.queries = fmnist_images(
            spec.dir + "/t10k-images-idx3-ubyte.gz",
            spec.nq,
            &ds.d);
    ds.nq = ds.queries.size() / ds.d;
    // The base size is known without decompressing the whole file only
    // from the spec; clamp it to what the file holds when we do read it.
    ds.nb = spec.nb;
    ds.description = "Fashion-MNIST (" + spec.dir +
            "): train images as base, test images as queries, raw pixels";
    index_and_gt(ds, spec.key(), spec.nb, 1234, gt_nq, cache_dir, [&] {
        int d = 0;
        std::vector<float> base = fmnist_images(base_path, spec.nb, &d);
        ds.nb = base.size() / d;
        return base;
    });
    ds.nb = size_t(ds.index->ntotal);
    return ds;
}

ListStats list_stats(const faiss::IndexIVF& index) {
    ListStats s;
    s.nlist = index.nlist;
    std::vector<size_t> sizes(index.nlist);
    size_t total = 0;
    for (size_t l = 0; l < index.nlist; l++) {
        sizes[l] = index.invlists->list_size(l);
        total += sizes[l];
        s.empty += sizes[l] == 0;
    }
    std::sort(sizes.rbegin(), sizes.rend());
    s.avg = double(total) / double(std::max<size_t>(1, index.nlist));
    s.max = sizes.empty() ? 0 : sizes[0];
    s.max_over_avg = s.avg > 0 ? double(s.max) / s.avg : 0;
    const size_t top = std::max<size_t>(1, index.nlist / 100);
    size_t top_total = 0;
    for (size_t i = 0; i < top && i < sizes.size(); i++) {
        top_total += sizes[i];
    }
    s.top1pct_share = total ? double(top_total) / double(total) : 0;
    return s;
}

double
recall_at(const Dataset& ds, int r, size_t n, const idx_t* labels, int k) {
    n = std::min(n, ds.gt_nq);
    r = std::min(r, std::min(k, ds.gt_k));
    if (n == 0 || r <= 0) {
        return 0;
    }
    size_t hits = 0;
    for (size_t q = 0; q < n; q++) {
        const idx_t* g = ds.gt.data() + q * ds.gt_k;
        std::unordered_set<idx_t> truth(g, g + r);
        for (int j = 0; j < r; j++) {
            hits += truth.count(labels[q * k + j]);
        }
    }
    return double(hits) / double(n * r);
}

void write_lists(const Dataset& ds, const std::string& path) {
    const faiss::IndexIVF& index = *ds.index;
    std::vector<float> dis(ds.nq * ds.nprobe);
    std::vector<idx_t> assign(ds.nq * ds.nprobe);
    index.quantizer->search(
            idx_t(ds.nq),
            ds.queries.data(),
            idx_t(ds.nprobe),
            dis.data(),
            assign.data());
    std::vector<uint64_t> probes(ds.nlist);
    for (idx_t l : assign) {
        if (l >= 0) {
            probes[l]++;
        }
    }
    std::ofstream out(path);
    out << "# " << ds.name << ": " << ds.description << "\n"
        << "# probes: the data set's " << ds.nq << " queries, nprobe "
        << ds.nprobe << "; IVF" << ds.nlist << "," << ds.codec << "\n"
        << "# written by bench_ivf --lists-out (the index it measures)\n"
        << ds.d << " " << ds.nlist << " " << ds.nprobe << "\n";
    for (size_t l = 0; l < ds.nlist; l++) {
        out << index.invlists->list_size(l) << " " << probes[l] << "\n";
    }
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

} // namespace ivf
} // namespace bench
