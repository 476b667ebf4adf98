// HNSWTables under many clients: 16 client threads over 10 tables under
// every policy, each answer the serial (stock) one and exactly one task per
// query; a search nested in a task; each table's queries on its CCD under
// the ccd policy; exact touched-node counts against an index that counts
// the distances stock FAISS computes. (Answers against stock for each
// codec and metric: test_HNSWTables.cpp.)

#include <faiss/HNSWTables.h>

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/impl/IDSelector.h>

#include <gtest/gtest.h>

#include "fashion_mnist.h"
#include "hnsw_test_util.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace hnsw_test;

namespace {

// ------------------------------------------------ many clients, tables

/// TenTables: 10 small tables of mixed dimension, size, codec and metric,
/// with 32 queries each and their stock answers (k = 10).
struct TenTables {
    static constexpr int kTables = 10;
    static constexpr int kQueries = 32;
    static constexpr idx_t kK = 10;
    std::vector<std::unique_ptr<faiss::IndexHNSW>> indexes;
    std::vector<std::vector<float>> queries;
    std::vector<Answer> answers; ///< per table, all its queries

    TenTables() {
        for (int t = 0; t < kTables; t++) {
            const int d = 8 + 8 * (t % 4);
            const auto base = clustered(800 + 150 * t, d, 10, 100 + t);
            indexes.push_back(make_hnsw(
                    t % 2 ? "HNSW12,SQ8" : "HNSW12",
                    d,
                    base,
                    t == 3 ? faiss::METRIC_INNER_PRODUCT : faiss::METRIC_L2));
            queries.push_back(clustered(kQueries, d, 10, 200 + t));
            answers.push_back(
                    reference(*indexes[t], kQueries, queries[t].data(), kK));
        }
    }
    int d(int t) const {
        return int(indexes[t]->d);
    }
    /// matches: the answer to query q of table t.
    bool matches(int t, int q, const float* D, const idx_t* I) const {
        const Answer& a = answers[t];
        return std::equal(D, D + kK, a.D.begin() + q * kK) &&
                std::equal(I, I + kK, a.I.begin() + q * kK);
    }
};

class HNSWTablesPolicies : public ::testing::TestWithParam<PolicyKind> {};

// 16 client threads over 10 tables, mixing synchronous single queries,
// synchronous batches, futures and callbacks: every answer is the serial
// one, and the pool ran exactly one task per query.
TEST_P(HNSWTablesPolicies, SixteenClientsTenTablesMatchSerial) {
    const TenTables data;
    auto runtime = make_runtime("2x2", GetParam());
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    for (int t = 0; t < TenTables::kTables; t++) {
        tables.add_table(100 + t, data.indexes[t].get(), false);
    }
    const PoolStats before = pool.stats();
    const int kClients = 16, kOps = 40;
    std::atomic<int> wrong{0}, queries_run{0}, errors{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; c++) {
        clients.emplace_back([&, c] {
            std::mt19937 rng(c);
            std::vector<std::future<HNSWQueryResult>> futures;
            std::vector<std::pair<int, int>> future_keys;
            std::atomic<int> callbacks_left{0};
            for (int op = 0; op < kOps; op++) {
                const int t = int(rng() % TenTables::kTables);
                const int q = int(rng() % (TenTables::kQueries - 4));
                const float* x = data.queries[t].data() + q * data.d(t);
                const idx_t k = TenTables::kK;
                try {
                    switch (op % 4) {
                        case 0:
                        case 1: {
                            const idx_t n = op % 4 == 0 ? 1 : 4;
                            std::vector<float> D(n * k);
                            std::vector<idx_t> I(n * k);
                            tables.search(
                                    100 + t,
                                    n,
                                    x,
                                    data.d(t),
                                    k,
                                    D.data(),
                                    I.data());
                            for (idx_t j = 0; j < n; j++) {
                                wrong += !data.matches(
                                        t,
                                        q + int(j),
                                        &D[j * k],
                                        &I[j * k]);
                            }
                            queries_run += int(n);
                            break;
                        }
                        case 2:
                            futures.push_back(tables.search_async(
                                    100 + t,
                                    std::vector<float>(x, x + data.d(t)),
                                    k));
                            future_keys.emplace_back(t, q);
                            queries_run++;
                            break;
                        case 3:
                            callbacks_left++;
                            tables.search_with_callback(
                                    100 + t,
                                    std::vector<float>(x, x + data.d(t)),
                                    k,
                                    [&, t, q](
                                            std::exception_ptr e,
                                            HNSWQueryResult& r) {
                                        if (e) {
                                            errors++;
                                        } else {
                                            wrong += !data.matches(
                                                    t,
                                                    q,
                                                    r.distances.data(),
                                                    r.labels.data());
                                        }
                                        callbacks_left--;
                                    });
                            queries_run++;
                            break;
                    }
                } catch (...) {
                    errors++;
                }
            }
            for (size_t i = 0; i < futures.size(); i++) {
                HNSWQueryResult r = futures[i].get();
                wrong += !data.matches(
                        future_keys[i].first,
                        future_keys[i].second,
                        r.distances.data(),
                        r.labels.data());
            }
            EXPECT_TRUE(wait_until([&] {
                return callbacks_left.load() == 0;
            }));
        });
    }
    for (auto& t : clients) {
        t.join();
    }
    pool.wait_idle();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(
            pool.stats().since(before).tasks_run(),
            uint64_t(queries_run.load()));
    if (GetParam() == PolicyKind::round_robin) {
        EXPECT_EQ(
                pool.stats().since(before).intra_ccd_steals() +
                        pool.stats().since(before).cross_ccd_steals(),
                0u);
    }
}

// A search called from inside a task of a one-worker pool: the worker
// runs the query tasks while it waits.
TEST_P(HNSWTablesPolicies, NestedSearchFromATask) {
    const TenTables data;
    auto runtime = make_runtime("1x1", GetParam());
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(1, data.indexes[0].get(), false);
    Answer got{
            std::vector<float>(8 * TenTables::kK),
            std::vector<idx_t>(8 * TenTables::kK)};
    std::promise<void> done;
    pool.submit(kLocalMappingId, [&] {
        tables.search(
                1,
                8,
                data.queries[0].data(),
                TenTables::kK,
                got.D.data(),
                got.I.data());
        done.set_value();
    });
    ASSERT_EQ(
            done.get_future().wait_for(std::chrono::seconds(20)),
            std::future_status::ready);
    for (int q = 0; q < 8; q++) {
        EXPECT_TRUE(data.matches(
                0,
                q,
                &got.D[q * TenTables::kK],
                &got.I[q * TenTables::kK]));
    }
}

INSTANTIATE_TEST_SUITE_P(
        AllPolicies,
        HNSWTablesPolicies,
        ::testing::Values(
                PolicyKind::ccd,
                PolicyKind::flat_steal,
                PolicyKind::round_robin),
        [](const auto& info) {
            return std::string(policy_name(info.param));
        });

/// WorkerSink: which CCD ran each table's queries (record() runs on the
/// worker that ran the query), and the exact totals.
// Under the ccd policy every query of a table runs on the CCD its
// MappingId(table, 0) is placed on (cross-CCD stealing switched off).
TEST(HNSWTablesPlacement, CcdPolicyKeepsEachTableOnItsCcd) {
    const TenTables data;
    PoolOptions options;
    options.steal.cross_ccd_threshold = INT64_MAX;
    auto runtime = make_runtime("3x2", PolicyKind::ccd, options);
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    WorkerSink sink;
    sink.pool = &pool;
    tables.traffic_sink = &sink;
    for (int t = 0; t < TenTables::kTables; t++) {
        tables.add_table(t, data.indexes[t].get(), false);
    }
    std::vector<std::thread> clients;
    for (int c = 0; c < 4; c++) {
        clients.emplace_back([&, c] {
            for (int t = 0; t < TenTables::kTables; t++) {
                std::vector<float> D(TenTables::kQueries * TenTables::kK);
                std::vector<idx_t> I(D.size());
                tables.search(
                        (t + c) % TenTables::kTables,
                        TenTables::kQueries,
                        data.queries[(t + c) % TenTables::kTables].data(),
                        TenTables::kK,
                        D.data(),
                        I.data());
            }
        });
    }
    for (auto& t : clients) {
        t.join();
    }
    EXPECT_EQ(
            sink.records,
            uint64_t(4 * TenTables::kTables * TenTables::kQueries));
    std::set<int> used;
    for (int t = 0; t < TenTables::kTables; t++) {
        const MappingId id = make_mapping_id(t, 0);
        EXPECT_EQ(sink.ccds[id], std::set<int>{pool.pick_ccd(id)})
                << "table " << t;
        used.insert(pool.pick_ccd(id));
    }
    EXPECT_GT(used.size(), 1u); // the tables spread over CCDs
}

// ------------------------------------------------------ touched nodes

/// CountingFlat: an IndexFlatL2 whose distance computers count into one
/// shared counter: an independent count of what stock FAISS computes.
struct CountingFlat : faiss::IndexFlatL2 {
    struct Counter : faiss::DistanceComputer {
        std::unique_ptr<faiss::DistanceComputer> base;
        std::atomic<uint64_t>* count;
        void set_query(const float* x) override {
            base->set_query(x);
        }
        float operator()(idx_t i) override {
            count->fetch_add(1, std::memory_order_relaxed);
            return (*base)(i);
        }
        float symmetric_dis(idx_t i, idx_t j) override {
            return base->symmetric_dis(i, j);
        }
    };
    mutable std::atomic<uint64_t> count{0};
    explicit CountingFlat(int d) : faiss::IndexFlatL2(d) {}
    faiss::DistanceComputer* get_distance_computer() const override {
        auto* c = new Counter;
        c->base.reset(faiss::IndexFlatL2::get_distance_computer());
        c->count = &count;
        return c;
    }
};

// The nodes a query reports are exactly the distance computations stock
// FAISS makes for it; the same on a second run; the bytes follow the
// traffic model; FAISS 1.7.3's own statistics count level 0 only (n3).
TEST(HNSWTablesTraffic, TouchedNodesAreExact) {
    const int d = 32, M = 16, nq = 100;
    const auto base = clustered(4000, d, 20, 11);
    const auto queries = clustered(nq, d, 20, 12);
    auto* storage = new CountingFlat(d);
    faiss::IndexHNSW index(storage, M);
    index.own_fields = true;
    index.add(4000, base.data());
    ASSERT_GT(index.hnsw.max_level, 0);

    storage->count = 0;
    faiss::hnsw_stats.reset();
    const Answer ref = reference(index, nq, queries.data(), 10);
    const uint64_t stock = storage->count.load();
    const size_t level0 = faiss::hnsw_stats.n3;

    auto runtime = make_runtime("2x2");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(12, &index, false);
    const MappingId id = make_mapping_id(12, 0);
    for (int run = 0; run < 2; run++) {
        WorkerSink sink;
        sink.pool = &pool;
        tables.traffic_sink = &sink;
        storage->count = 0;
        EXPECT_EQ(via_tables(tables, 12, nq, queries.data(), 10), ref);
        EXPECT_EQ(sink.records, uint64_t(nq));
        EXPECT_EQ(sink.totals[id].first, stock) << "run " << run;
        EXPECT_EQ(storage->count.load(), stock) << "run " << run;
        EXPECT_EQ(
                sink.totals[id].second,
                stock * (d * sizeof(float) + M * sizeof(int)));
    }
    // Per query too: the futures' counts add up to the same total.
    tables.traffic_sink = nullptr;
    uint64_t sum = 0;
    for (int q = 0; q < nq; q++) {
        sum += tables.search_async(
                             12,
                             {queries.begin() + q * d,
                              queries.begin() + (q + 1) * d},
                             10)
                       .get()
                       .touched;
    }
    EXPECT_EQ(sum, stock);
    // 1.7.3's hnsw_stats.n3 is level 0's distance count; the difference is
    // the entry point and the upper levels' greedy descent.
    EXPECT_GT(level0, 0u);
    EXPECT_LT(level0, stock);
}

} // namespace
