// HNSWTables: results identical to stock IndexHNSW::search (one OpenMP
// thread) for HNSWFlat and HNSWSQ, L2 and inner product, on synthetic data
// and Fashion-MNIST; efSearch per table and per call. (Many clients,
// placement and touched nodes: test_HNSWTablesClients.cpp; futures,
// callbacks, lifetime and bad input: test_HNSWTablesLifetime.cpp.)

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

// ------------------------------------------------------ same as stock

using Case = std::tuple<std::string, faiss::MetricType>;

class HNSWTablesMatchesStock : public ::testing::TestWithParam<Case> {};

TEST_P(HNSWTablesMatchesStock, Synthetic) {
    const auto [key, metric] = GetParam();
    const int d = 24, nb = 3000, nq = 200;
    const auto base = clustered(nb, d, 20, 1);
    const auto queries = clustered(nq, d, 20, 2);
    auto index = make_hnsw(key, d, base, metric);
    auto runtime = make_runtime("2x2");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(7, index.get(), false);
    EXPECT_EQ(tables.ef_search(7), index->hnsw.efSearch);
    EXPECT_EQ(tables.dimension(7), d);

    for (idx_t k : {1, 10, 100}) {
        EXPECT_EQ(
                via_tables(tables, 7, nq, queries.data(), k),
                reference(*index, nq, queries.data(), k))
                << key << " k=" << k;
    }
    // Per call.
    for (auto [ef, check] :
         {std::make_pair(64, true),
          std::make_pair(200, false),
          std::make_pair(8, true)}) {
        faiss::SearchParametersHNSW params;
        params.efSearch = ef;
        params.check_relative_distance = check;
        EXPECT_EQ(
                via_tables(tables, 7, nq, queries.data(), 10, &params),
                reference(*index, nq, queries.data(), 10, &params))
                << key << " efSearch=" << ef;
    }
    // Per table: the table's efSearch goes into the parameters.
    tables.set_ef_search(7, 48);
    EXPECT_EQ(tables.ef_search(7), 48);
    faiss::SearchParametersHNSW p48;
    p48.efSearch = 48;
    p48.check_relative_distance = index->hnsw.check_relative_distance;
    const Answer ref48 = reference(*index, nq, queries.data(), 10, &p48);
    EXPECT_EQ(via_tables(tables, 7, nq, queries.data(), 10), ref48);
    // ... and a table registered with efSearch 48 on an index whose own
    // efSearch is 48 is exactly the parameterless stock search.
    index->hnsw.efSearch = 48;
    tables.add_table(8, index.get(), false, 48);
    EXPECT_EQ(
            via_tables(tables, 8, nq, queries.data(), 10),
            reference(*index, nq, queries.data(), 10));
    // n == 0 is a no-op.
    tables.search(7, 0, nullptr, 10, nullptr, nullptr);
}

// hand_off 0 and -1 on a one-CCD pool: the calling thread runs the
// queries (workers help a batch whose measured cost pays for them); same
// answers as stock; a single query never becomes a pool task.
TEST(HNSWTablesInCaller, SameAnswersAndSingleQueriesStayInTheCaller) {
    const int d = 24, nb = 3000, nq = 300;
    const auto base = clustered(nb, d, 20, 11);
    const auto queries = clustered(nq, d, 20, 12);
    auto index = make_hnsw("HNSW16", d, base, faiss::METRIC_L2);
    auto runtime = make_runtime("1x2");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.add_table(3, index.get(), false);
    const Answer ref = reference(*index, nq, queries.data(), 10);
    for (int hand_off : {-1, 0}) {
        tables.hand_off = hand_off;
        for (int rep = 0; rep < 3; rep++) { // the first batch measures
            EXPECT_EQ(via_tables(tables, 3, nq, queries.data(), 10), ref)
                    << "hand_off " << hand_off;
        }
        pool.wait_idle();
        const uint64_t before = pool.stats().tasks_run();
        Answer one{std::vector<float>(10), std::vector<idx_t>(10)};
        for (idx_t q = 0; q < 50; q++) {
            tables.search(
                    3,
                    1,
                    queries.data() + q * d,
                    d,
                    10,
                    one.D.data(),
                    one.I.data());
            ASSERT_TRUE(std::equal(
                    one.I.begin(),
                    one.I.end(),
                    ref.I.begin() + q * 10));
        }
        pool.wait_idle();
        EXPECT_EQ(pool.stats().tasks_run(), before)
                << "a single query went to the pool, hand_off " << hand_off;
    }
}

// search_batch_async: the same answers as the synchronous search, the
// callback called once after every query finished; input errors throw at
// once and submit nothing; a query's error reaches the callback.
TEST_P(HNSWTablesMatchesStock, BatchAsync) {
    const auto [key, metric] = GetParam();
    const int d = 16, nq = 100, k = 10;
    const auto base = clustered(2000, d, 10, 5);
    const auto queries = clustered(nq, d, 10, 6);
    auto index = make_hnsw(key, d, base, metric);
    auto runtime = make_runtime("2x2");
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(3, index.get(), false);
    Answer got{std::vector<float>(nq * k), std::vector<idx_t>(nq * k)};
    std::promise<std::exception_ptr> done;
    std::atomic<int> calls{0};
    const uint64_t before = runtime->pool().stats().tasks_run();
    tables.search_batch_async(
            3,
            nq,
            queries.data(),
            d,
            k,
            got.D.data(),
            got.I.data(),
            [&](std::exception_ptr error) {
                calls++;
                done.set_value(error);
            });
    EXPECT_EQ(done.get_future().get(), nullptr);
    runtime->pool().wait_idle();
    EXPECT_EQ(calls.load(), 1);
    EXPECT_EQ(runtime->pool().stats().tasks_run() - before, uint64_t(nq));
    EXPECT_EQ(got, reference(*index, nq, queries.data(), k));

    auto never = [&](std::exception_ptr) {
        calls++;
    };
    expect_faiss_error(
            [&] {
                tables.search_batch_async(
                        4,
                        nq,
                        queries.data(),
                        d,
                        k,
                        got.D.data(),
                        got.I.data(),
                        never);
            },
            "unknown table id 4");
    expect_faiss_error(
            [&] {
                tables.search_batch_async(
                        3,
                        nq,
                        queries.data(),
                        d + 1,
                        k,
                        got.D.data(),
                        got.I.data(),
                        never);
            },
            "dimension");
    expect_faiss_error(
            [&] {
                tables.search_batch_async(
                        3,
                        nq,
                        queries.data(),
                        d,
                        k,
                        got.D.data(),
                        got.I.data(),
                        nullptr);
            },
            "callback");
    runtime->pool().wait_idle();
    EXPECT_EQ(calls.load(), 1);

    // An error inside the queries: a selector that throws.
    struct Throwing : faiss::IDSelector {
        bool is_member(idx_t) const override {
            throw std::runtime_error("selector says no");
        }
    } throwing;
    faiss::SearchParametersHNSW params;
    params.efSearch = 16;
    params.sel = &throwing;
    std::promise<std::exception_ptr> failed;
    tables.search_batch_async(
            3,
            nq,
            queries.data(),
            d,
            k,
            got.D.data(),
            got.I.data(),
            [&](std::exception_ptr error) {
                failed.set_value(error);
            },
            &params);
    std::exception_ptr error = failed.get_future().get();
    ASSERT_NE(error, nullptr);
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        EXPECT_NE(
                std::string(e.what()).find("selector says no"),
                std::string::npos)
                << e.what();
    }
}

// Fewer than k results (-1 labels) and an empty table, as stock.
TEST_P(HNSWTablesMatchesStock, FewerThanKAndEmpty) {
    const auto [key, metric] = GetParam();
    const int d = 8;
    const auto base = clustered(300, d, 4, 3);
    auto empty = make_hnsw(key, d, base, metric);
    empty->reset();
    auto tiny = make_hnsw(key, d, {base.begin(), base.begin() + 5 * d}, metric);
    auto runtime = make_runtime("2x1");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(1, empty.get(), false);
    tables.add_table(2, tiny.get(), false);
    const auto queries = clustered(9, d, 4, 4);
    EXPECT_EQ(
            via_tables(tables, 1, 9, queries.data(), 10),
            reference(*empty, 9, queries.data(), 10));
    const Answer got = via_tables(tables, 2, 9, queries.data(), 10);
    EXPECT_EQ(got, reference(*tiny, 9, queries.data(), 10));
    EXPECT_EQ(std::count(got.I.begin(), got.I.end(), -1), 9 * 5);
}

INSTANTIATE_TEST_SUITE_P(
        Indexes,
        HNSWTablesMatchesStock,
        ::testing::Combine(
                ::testing::Values("HNSW16", "HNSW16,SQ8"),
                ::testing::Values(
                        faiss::METRIC_L2,
                        faiss::METRIC_INNER_PRODUCT)),
        [](const auto& info) {
            std::string name = std::get<0>(info.param);
            name = name.find(',') == std::string::npos ? "Flat" : "SQ8";
            return name +
                    (std::get<1>(info.param) == faiss::METRIC_L2 ? "_L2"
                                                                 : "_IP");
        });

// Fashion-MNIST (784 dimensions): 10K training images as the base, 200 test
// images as queries.
TEST(HNSWTablesFashionMnist, FlatAndSQ8MatchStock) {
    const auto base = fashion_mnist::load_images(
            fashion_mnist::path("train-images-idx3-ubyte.gz"),
            10000);
    const auto queries = fashion_mnist::load_images(
            fashion_mnist::path("t10k-images-idx3-ubyte.gz"),
            200);
    if (base.n == 0 || queries.n == 0) {
        GTEST_SKIP() << "Fashion-MNIST not found under " << fashion_mnist::kDir
                     << " (Debian package dataset-fashion-mnist)";
    }
    ASSERT_EQ(base.d, 784);
    ASSERT_EQ(base.n, 10000);
    auto runtime = make_runtime("2x1");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    uint32_t id = 0;
    for (const char* key : {"HNSW32", "HNSW32,SQ8"}) {
        auto index = make_hnsw(key, base.d, base.x);
        tables.add_table(++id, index.get(), false);
        EXPECT_EQ(
                via_tables(tables, id, queries.n, queries.x.data(), 10),
                reference(*index, queries.n, queries.x.data(), 10))
                << key;
        // Below and above the index's efSearch (16); see "efSearch" in
        // HNSWTables.h for what FAISS 1.7.3 makes of the second.
        for (int ef : {8, 64}) {
            faiss::SearchParametersHNSW params;
            params.efSearch = ef;
            EXPECT_EQ(
                    via_tables(
                            tables,
                            id,
                            queries.n,
                            queries.x.data(),
                            10,
                            &params),
                    reference(*index, queries.n, queries.x.data(), 10, &params))
                    << key << " efSearch=" << ef;
        }
        tables.remove_table(id).wait();
    }
}

} // namespace
