/**
 * ivf_test_util.h: what the IVF tests share: the stock reference search,
 * deterministic clustered data that leaves some lists empty, indexes of
 * each kind (trained once, cloned), a runtime without a monitor, and the
 * comparison of results (equal distances, equal labels except among exact
 * ties).
 */

#pragma once

#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/clone_index.h>
#include <faiss/index_factory.h>

#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace ivf_test {

using namespace faiss::ccd;
using idx_t = faiss::Index::idx_t;

/// reference_search: stock IndexIVF::search with one OpenMP thread. Stock
/// FAISS slices a batch per OpenMP thread and coarse-quantizes each slice
/// on its own, and the BLAS kernels round a slice differently from the
/// whole batch; residual codecs (IVFPQ) carry that into the last bits of
/// their distances. One thread is the run-to-run stable reference; we
/// quantize the batch in one call, as it does.
inline void reference_search(
        const faiss::Index& index,
        idx_t n,
        const float* x,
        idx_t k,
        float* distances,
        idx_t* labels,
        const faiss::SearchParameters* params = nullptr) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    index.search(n, x, k, distances, labels, params);
    omp_set_num_threads(saved);
}

/// make_runtime: a pool of the given shape, without a monitor (these tests
/// are about answers; test_Monitor.cpp is about placement).
inline std::shared_ptr<Runtime> make_runtime(const char* spec) {
    return Runtime::create(
            RuntimeOptions().set_topology(spec).set_monitor(false));
}

const int kDim = 16;
const int kNlist = 32;

/// clustered: n vectors around `centers` gaussian blobs (fixed seed).
inline std::vector<float>
clustered(int n, int centers, uint64_t seed, float spread) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0, 1);
    std::vector<float> c(centers * kDim);
    for (float& v : c) {
        v = g(rng) * 4;
    }
    std::vector<float> x(size_t(n) * kDim);
    for (int i = 0; i < n; i++) {
        int b = int(rng() % centers);
        for (int j = 0; j < kDim; j++) {
            x[i * kDim + j] = c[b * kDim + j] + spread * g(rng);
        }
    }
    return x;
}

/// Fixture data: trained on a wide set, filled from a narrow one, so that
/// some lists stay empty.
struct Data {
    std::vector<float> train = clustered(4000, 64, 1, 1.0f);
    std::vector<float> base = clustered(5000, 12, 2, 0.7f);
    std::vector<float> queries = clustered(1000, 12, 3, 1.0f);
};
inline const Data& data() {
    static Data d;
    return d;
}

/// make_index: a filled index of the given kind. Training (k-means) is the
/// slow part, so each kind is trained once and cloned.
inline std::unique_ptr<faiss::IndexIVF> make_index(
        const std::string& key,
        faiss::MetricType metric) {
    static std::map<std::pair<std::string, int>, std::unique_ptr<faiss::Index>>
            trained;
    auto& proto = trained[{key, int(metric)}];
    if (!proto) {
        proto.reset(faiss::index_factory(kDim, key.c_str(), metric));
        // index_factory turns on polysemous training for IVFPQ, which costs
        // seconds; ctest runs each test in its own process, so each would
        // pay it. Search results do not depend on it.
        if (auto* pq = dynamic_cast<faiss::IndexIVFPQ*>(proto.get())) {
            pq->do_polysemous_training = false;
        }
        proto->train(4000, data().train.data());
    }
    std::unique_ptr<faiss::Index> idx(faiss::clone_index(proto.get()));
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(idx.get());
    EXPECT_NE(ivf, nullptr);
    idx.release();
    std::unique_ptr<faiss::IndexIVF> out(ivf);
    out->add(5000, data().base.data());
    return out;
}

/// expect_same_results: distances equal; labels equal except among exactly
/// tied distances (inside the result, labels of a tie group are the same
/// set; at the k-th distance a tie may keep different labels).
inline void expect_same_results(
        idx_t n,
        idx_t k,
        const std::vector<float>& d_ref,
        const std::vector<idx_t>& i_ref,
        const std::vector<float>& d_got,
        const std::vector<idx_t>& i_got,
        const std::string& what) {
    int bad = 0;
    for (idx_t q = 0; q < n && bad < 5; q++) {
        const float* dr = &d_ref[q * k];
        const float* dg = &d_got[q * k];
        const idx_t* ir = &i_ref[q * k];
        const idx_t* ig = &i_got[q * k];
        for (idx_t j = 0; j < k; j++) {
            if (!(dr[j] == dg[j] || (std::isinf(dr[j]) && std::isinf(dg[j])))) {
                ADD_FAILURE() << what << " q=" << q << " j=" << j
                              << " distance " << dg[j] << " != " << dr[j];
                bad++;
                break;
            }
        }
        std::map<float, std::multiset<idx_t>> ref_groups, got_groups;
        for (idx_t j = 0; j < k; j++) {
            ref_groups[dr[j]].insert(ir[j]);
            got_groups[dg[j]].insert(ig[j]);
        }
        const float boundary = dr[k - 1];
        for (auto& [dist, labels] : ref_groups) {
            if (dist == boundary) {
                continue; // a tie at the cut may keep other labels
            }
            if (got_groups[dist] != labels) {
                ADD_FAILURE() << what << " q=" << q << " labels differ at"
                              << " distance " << dist;
                bad++;
                break;
            }
        }
    }
}

} // namespace ivf_test
