/**
 * hnsw_test_util.h: what the HNSWTables tests share: stock reference
 * searches, synthetic data, index and pool factories, a sink that records
 * where queries ran, and a way to hold every worker of a pool.
 */

#pragma once

#include <faiss/HNSWTables.h>

#include <faiss/IndexHNSW.h>
#include <faiss/impl/FaissException.h>
#include <faiss/index_factory.h>

#include <gtest/gtest.h>

#include <omp.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace hnsw_test {

using namespace faiss::ccd;
using idx_t = faiss::Index::idx_t;

/// Answer: distances and labels of n queries, n * k each.
struct Answer {
    std::vector<float> D;
    std::vector<idx_t> I;
    bool operator==(const Answer& o) const {
        return D == o.D && I == o.I;
    }
};

/// reference: stock IndexHNSW::search with one OpenMP thread.
inline Answer reference(
        const faiss::IndexHNSW& index,
        idx_t n,
        const float* x,
        idx_t k,
        const faiss::SearchParameters* params = nullptr) {
    Answer a{std::vector<float>(n * k), std::vector<idx_t>(n * k)};
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    index.search(n, x, k, a.D.data(), a.I.data(), params);
    omp_set_num_threads(saved);
    return a;
}

inline Answer via_tables(
        const HNSWTables& tables,
        uint32_t id,
        idx_t n,
        const float* x,
        idx_t k,
        const faiss::SearchParametersHNSW* params = nullptr) {
    Answer a{std::vector<float>(n * k), std::vector<idx_t>(n * k)};
    tables.search(id, n, x, k, a.D.data(), a.I.data(), params);
    return a;
}

/// clustered: n vectors of dimension d around `centers` gaussian blobs.
inline std::vector<float> clustered(int n, int d, int centers, uint64_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0, 1);
    std::vector<float> c(size_t(centers) * d);
    for (float& v : c) {
        v = g(rng) * 3;
    }
    std::vector<float> x(size_t(n) * d);
    for (int i = 0; i < n; i++) {
        const int b = int(rng() % centers);
        for (int j = 0; j < d; j++) {
            x[size_t(i) * d + j] = c[size_t(b) * d + j] + g(rng);
        }
    }
    return x;
}

/// make_hnsw: an index_factory HNSW index ("HNSW16", "HNSW16,SQ8"),
/// trained if needed and filled with `base`.
inline std::unique_ptr<faiss::IndexHNSW> make_hnsw(
        const std::string& key,
        int d,
        const std::vector<float>& base,
        faiss::MetricType metric = faiss::METRIC_L2) {
    std::unique_ptr<faiss::Index> idx(
            faiss::index_factory(d, key.c_str(), metric));
    auto* hnsw = dynamic_cast<faiss::IndexHNSW*>(idx.get());
    EXPECT_NE(hnsw, nullptr) << key;
    idx.release();
    std::unique_ptr<faiss::IndexHNSW> out(hnsw);
    const idx_t n = idx_t(base.size() / d);
    if (!out->is_trained) {
        out->train(n, base.data());
    }
    out->add(n, base.data());
    return out;
}

/// make_runtime: a pool of the given shape and policy, without a monitor
/// (tests that want traffic install their own sink).
inline std::shared_ptr<Runtime> make_runtime(
        const std::string& spec,
        PolicyKind policy = PolicyKind::ccd,
        PoolOptions options = PoolOptions()) {
    return Runtime::create(RuntimeOptions()
                                   .set_topology(spec)
                                   .set_policy(policy)
                                   .set_pool(options)
                                   .set_monitor(false));
}

/// expect_faiss_error: f() throws a FaissException mentioning `needle`.
template <class F>
void expect_faiss_error(F f, const std::string& needle) {
    try {
        f();
        ADD_FAILURE() << "no exception; expected one mentioning " << needle;
    } catch (const faiss::FaissException& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
                << e.what();
    }
}

/// wait_until: polls `done` for up to 20 s.
template <class F>
bool wait_until(F done) {
    const auto end =
            std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
        if (std::chrono::steady_clock::now() > end) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

/// Blockers: one task per worker of a pool that holds its worker until
/// release(), so that everything submitted meanwhile stays queued.
/// Outside submissions with kLocalMappingId go round-robin over all
/// workers under every policy, and a task already running is never
/// stolen, so once `started` reaches the worker count every worker holds
/// one.
struct Blockers {
    std::atomic<int> started{0};
    std::promise<void> gate;
    std::shared_future<void> opened = gate.get_future().share();

    explicit Blockers(Pool& pool) {
        for (int w = 0; w < pool.num_workers(); w++) {
            // By value: the task may still be returning from wait() when
            // this object is gone.
            pool.submit(kLocalMappingId, [counter = &started, gate = opened] {
                counter->fetch_add(1);
                gate.wait();
            });
        }
        EXPECT_TRUE(wait_until([&] {
            return started.load() == pool.num_workers();
        }));
    }
    void release() {
        gate.set_value();
    }
};

struct WorkerSink : TrafficSink {
    Pool* pool = nullptr;
    std::mutex mutex;
    std::map<MappingId, std::set<int>> ccds;
    std::map<MappingId, std::pair<uint64_t, uint64_t>> totals;
    uint64_t records = 0;
    void record(MappingId id, uint64_t items, uint64_t bytes) noexcept
            override {
        const int w = pool->current_worker();
        std::lock_guard<std::mutex> lock(mutex);
        ccds[id].insert(w < 0 ? -1 : pool->topology().ccd_of(w));
        totals[id].first += items;
        totals[id].second += bytes;
        records++;
    }
};

} // namespace hnsw_test
