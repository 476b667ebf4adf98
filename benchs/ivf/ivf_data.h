/**
 * ivf_data.h: the data sets of bench_ivf, each with its IVF index (Flat
 * codes unless the spec names another codec)
 * (built once, cached on disk), its queries and exact ground truth.
 *
 *  - synthetic: gaussian blobs of uneven sizes; big blobs are dense (spread
 *    ~ 1/sqrt(size)), so k-means keeps each as one list instead of cutting
 *    it up, and IVF lists end up as uneven as the blobs. Queries pick a
 *    blob by Zipf(s) over a fixed random order of the blobs, then add the
 *    blob's own noise. Everything from fixed seeds.
 *  - fmnist: Debian's dataset-fashion-mnist (60K train images as the base,
 *    10K test images as queries, 784 floats in [0, 255]).
 *
 * The cache (index + ground truth) lives in a directory keyed by every
 * parameter that shapes it; a file that does not load is rebuilt.
 */

#pragma once

#include <faiss/IndexIVF.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bench {
namespace ivf {

using idx_t = faiss::Index::idx_t;

/// SyntheticSpec: every parameter of the synthetic set.
struct SyntheticSpec {
    size_t nb = 500000;
    int d = 128;
    size_t nblobs = 2048;
    size_t nlist = 1024;
    size_t nprobe = 32;
    size_t ntrain = 50000;
    size_t nq = 8000;
    double zipf_s = 1.1;
    /// size_sigma: blob weights are exp(size_sigma * N(0, 1)) (lognormal).
    double size_sigma = 1.0;
    /// spread: per-dimension noise of a blob of average size; centers are
    /// N(0, 1) per dimension. A blob of n points has spread * sqrt(avg / n).
    double spread = 0.5;
    uint64_t seed = 1234;
    /// codec: the IVF index's code, an index_factory suffix ("Flat",
    /// "SQ8", "PQ16", ...).
    std::string codec = "Flat";

    /// key: a file-name-safe string of every parameter (the cache key).
    std::string key() const;
};

/// FmnistSpec: Fashion-MNIST from a directory of idx*-ubyte.gz files.
struct FmnistSpec {
    std::string dir = "/usr/share/datasets/fashion-mnist";
    size_t nb = 60000; ///< first nb training images
    size_t nq = 10000; ///< first nq test images
    size_t nlist = 256;
    size_t nprobe = 8;
    std::string codec = "Flat"; ///< as SyntheticSpec::codec

    std::string key() const;
};

/// ListStats: how uneven the inverted lists are, and what queries scan.
struct ListStats {
    size_t nlist = 0;
    size_t empty = 0;
    double avg = 0; ///< codes per list
    size_t max = 0; ///< largest list
    double max_over_avg = 0;
    double top1pct_share = 0; ///< share of codes in the largest 1% of lists
};

struct Dataset {
    std::string name;        ///< "synthetic" or "fmnist"
    std::string description; ///< one line
    int d = 0;
    size_t nb = 0;
    size_t nlist = 0;
    size_t nprobe = 0;
    size_t nq = 0;
    std::string codec = "Flat"; ///< index_factory suffix after "IVF<nlist>,"
    std::vector<float> queries; ///< nq x d

    std::unique_ptr<faiss::IndexIVF> index;
    bool index_from_cache = false;
    std::string cache_file;
    double build_seconds = 0; ///< building or loading the index

    /// Exact top-gt_k ids of the first gt_nq queries (IndexFlatL2).
    size_t gt_nq = 0;
    int gt_k = 10;
    std::vector<idx_t> gt;
    double gt_seconds = 0;

    ListStats lists;
};

/// make_synthetic: the synthetic set; the index and ground truth for the
/// first gt_nq queries come from `cache_dir` when present there.
Dataset make_synthetic(
        const SyntheticSpec& spec,
        size_t gt_nq,
        const std::string& cache_dir);

/// load_fmnist: Fashion-MNIST; throws std::runtime_error when the files are
/// missing or malformed.
Dataset
load_fmnist(const FmnistSpec& spec, size_t gt_nq, const std::string& cache_dir);

/// list_stats: the list-size figures of an IVF index.
ListStats list_stats(const faiss::IndexIVF& index);

/// write_lists: the index's list sizes and how often the data set's queries
/// probe each list, in bench_sim's .lists format (benchs/sim/data): the
/// scale model's validation replays this very index and these queries.
/// Throws std::runtime_error when the file cannot be written.
void write_lists(const Dataset& ds, const std::string& path);

/// recall_at: mean |top-r of `labels` ∩ top-r of gt| / r over queries
/// [0, n) (n <= ds.gt_nq); labels has k per query.
double
recall_at(const Dataset& ds, int r, size_t n, const idx_t* labels, int k);

} // namespace ivf
} // namespace bench
