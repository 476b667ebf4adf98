// HNSWTables: futures and callbacks; errors thrown inside query tasks;
// unregistering tables (owned or not) and destroying the registry with
// queries in flight, under every policy; bad input.

#include <faiss/HNSWTables.h>

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/impl/FaissAssert.h>

#include <gtest/gtest.h>

#include "hnsw_test_util.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace hnsw_test;

namespace {

// ------------------------------------------------------ asynchronous

TEST(HNSWTablesAsync, FutureAndCallbackMatchStock) {
    const int d = 16;
    const auto base = clustered(2000, d, 10, 5);
    const auto queries = clustered(20, d, 10, 6);
    auto index = make_hnsw("HNSW16", d, base);
    const Answer ref = reference(*index, 20, queries.data(), 5);
    auto runtime = make_runtime("2x2");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    WorkerSink sink;
    sink.pool = &pool;
    tables.traffic_sink = &sink;
    tables.add_table(3, index.get(), false);

    std::vector<std::future<HNSWQueryResult>> futures;
    for (int q = 0; q < 20; q++) {
        futures.push_back(tables.search_async(
                3,
                {queries.begin() + q * d, queries.begin() + (q + 1) * d},
                5));
    }
    uint64_t touched = 0;
    for (int q = 0; q < 20; q++) {
        HNSWQueryResult r = futures[q].get();
        EXPECT_TRUE(std::equal(
                r.distances.begin(),
                r.distances.end(),
                ref.D.begin() + q * 5));
        EXPECT_TRUE(std::equal(
                r.labels.begin(),
                r.labels.end(),
                ref.I.begin() + q * 5));
        EXPECT_GT(r.touched, 0u);
        touched += r.touched;
    }
    std::mutex mutex;
    std::map<int, HNSWQueryResult> by_callback;
    std::atomic<int> left{20};
    for (int q = 0; q < 20; q++) {
        tables.search_with_callback(
                3,
                {queries.begin() + q * d, queries.begin() + (q + 1) * d},
                5,
                [&, q](std::exception_ptr e, HNSWQueryResult& r) {
                    EXPECT_FALSE(e);
                    std::lock_guard<std::mutex> lock(mutex);
                    by_callback[q] = std::move(r);
                    left--;
                });
    }
    ASSERT_TRUE(wait_until([&] {
        return left.load() == 0;
    }));
    for (int q = 0; q < 20; q++) {
        EXPECT_TRUE(std::equal(
                by_callback[q].labels.begin(),
                by_callback[q].labels.end(),
                ref.I.begin() + q * 5));
        EXPECT_TRUE(std::equal(
                by_callback[q].distances.begin(),
                by_callback[q].distances.end(),
                ref.D.begin() + q * 5));
    }
    // The sink saw both rounds, node for node.
    EXPECT_EQ(sink.totals[make_mapping_id(3, 0)].first, 2 * touched);
}

/// ThrowingFlat: an IndexFlatL2 whose distance computer fails on demand,
/// to throw from inside a query task.
struct ThrowingFlat : faiss::IndexFlatL2 {
    std::atomic<bool> fail{false};
    explicit ThrowingFlat(int d) : faiss::IndexFlatL2(d) {}
    faiss::DistanceComputer* get_distance_computer() const override {
        FAISS_THROW_IF_NOT_MSG(!fail.load(), "ThrowingFlat: injected failure");
        return faiss::IndexFlatL2::get_distance_computer();
    }
};

// An exception inside a query reaches the synchronous caller, the future
// and the callback; the pool keeps working.
// Issue 28, 5: a pool task that waits on search_async of its own pool.
// With one worker, the queued query could only run once the waiting task
// returned: it waited for ever. The worker now runs the query itself.
// wait_for, not get(): a regression fails in 10 s instead of hanging.
TEST(HNSWTablesAsync, AWorkerWaitingOnItsOwnQueryIsNotStuck) {
    const int d = 16;
    const auto base = clustered(2000, d, 10, 5);
    const auto queries = clustered(1, d, 10, 6);
    auto index = make_hnsw("HNSW16", d, base);
    const Answer ref = reference(*index, 1, queries.data(), 5);
    auto runtime = make_runtime("1x1");
    HNSWTables tables(runtime);
    tables.hand_off = 1;
    tables.add_table(3, index.get(), false);
    std::promise<int> done;
    std::future<int> outcome = done.get_future();
    HNSWQueryResult got;
    runtime->pool().submit(make_mapping_id(9, 0), [&] {
        auto f = tables.search_async(3, queries, 5);
        if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
            done.set_value(1);
            return;
        }
        got = f.get();
        done.set_value(0);
    });
    ASSERT_EQ(outcome.get(), 0)
            << "the worker waited 10 s on a query only it could run";
    runtime->pool().wait_idle();
    EXPECT_TRUE(
            std::equal(got.labels.begin(), got.labels.end(), ref.I.begin()));
    EXPECT_TRUE(std::equal(
            got.distances.begin(),
            got.distances.end(),
            ref.D.begin()));
    tables.remove_table(3).wait();
}

TEST(HNSWTablesAsync, ErrorsInsideTasksReachTheCaller) {
    const int d = 8;
    const auto base = clustered(500, d, 5, 7);
    auto* storage = new ThrowingFlat(d);
    faiss::IndexHNSW index(storage, 8);
    index.own_fields = true;
    index.add(500, base.data());
    auto runtime = make_runtime("2x1");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(1, &index, false);
    std::vector<float> q(base.begin(), base.begin() + d);
    std::vector<float> D(3 * 4);
    std::vector<idx_t> I(3 * 4);

    storage->fail = true;
    expect_faiss_error(
            [&] {
                tables.search(1, 3, base.data(), 4, D.data(), I.data());
            },
            "injected failure");
    auto future = tables.search_async(1, q, 4);
    expect_faiss_error(
            [&] {
                future.get();
            },
            "injected failure");
    std::promise<std::exception_ptr> got;
    tables.search_with_callback(
            1,
            q,
            4,
            [&](std::exception_ptr e, HNSWQueryResult& r) {
                EXPECT_TRUE(r.labels.empty());
                got.set_value(e);
            });
    std::exception_ptr e = got.get_future().get();
    ASSERT_TRUE(e);
    expect_faiss_error(
            [&] {
                std::rethrow_exception(e);
            },
            "injected failure");

    storage->fail = false;
    const Answer ref = reference(index, 3, base.data(), 4);
    tables.search(1, 3, base.data(), 4, D.data(), I.data());
    EXPECT_EQ(I, ref.I);
    EXPECT_EQ(
            tables.search_async(1, q, 4).get().labels,
            std::vector<idx_t>(ref.I.begin(), ref.I.begin() + 4));
}

// ---------------------------------------------------------- lifetime

class HNSWTablesLifetimePolicies : public ::testing::TestWithParam<PolicyKind> {
};

/// CountedHNSW: counts its destructions.
struct CountedHNSW : faiss::IndexHNSWFlat {
    static std::atomic<int> destroyed;
    CountedHNSW(int d, int M) : faiss::IndexHNSWFlat(d, M) {}
    ~CountedHNSW() override {
        destroyed++;
    }
};
std::atomic<int> CountedHNSW::destroyed{0};

// Queries queued behind a blocked pool when their (owned) table is
// unregistered: they all finish with the right answers, the index is
// deleted once, after the last of them, and `released` says when.
TEST_P(HNSWTablesLifetimePolicies, UnregisterWithQueriesInFlight) {
    const int d = 16;
    const auto base = clustered(1500, d, 10, 8);
    const auto queries = clustered(30, d, 10, 9);
    auto* index = new CountedHNSW(d, 12);
    index->add(1500, base.data());
    const Answer ref = reference(*index, 30, queries.data(), 5);
    CountedHNSW::destroyed = 0;

    auto runtime = make_runtime("2x1", GetParam());
    Pool& pool = runtime->pool();
    auto tables = std::make_unique<HNSWTables>(runtime);
    tables->hand_off = 1; // queries as pool tasks, whatever the topology
    tables->add_table(9, index, true);
    Blockers blockers(pool);

    auto queued = [&] {
        int64_t n = 0;
        for (const WorkerStats& w : pool.stats().workers) {
            n += w.queued;
        }
        return n;
    };
    // The synchronous client first: it holds the table until its batch is
    // done, so the asynchronous queries queued after it are the ones that
    // let the table go, on a worker.
    Answer sync{std::vector<float>(30 * 5), std::vector<idx_t>(30 * 5)};
    std::thread sync_client([&] {
        tables->search(
                9,
                30,
                queries.data(),
                d,
                5,
                sync.D.data(),
                sync.I.data());
    });
    ASSERT_TRUE(wait_until([&] {
        return queued() >= 30;
    }));
    std::vector<std::future<HNSWQueryResult>> futures;
    std::atomic<int> callbacks_ok{0};
    for (int q = 0; q < 30; q++) {
        std::vector<float> x(
                queries.begin() + q * d,
                queries.begin() + (q + 1) * d);
        futures.push_back(tables->search_async(9, x, 5));
        tables->search_with_callback(
                9,
                x,
                5,
                [&, q](std::exception_ptr e, HNSWQueryResult& r) {
                    callbacks_ok += !e &&
                            std::equal(
                                    r.labels.begin(),
                                    r.labels.end(),
                                    ref.I.begin() + q * 5);
                });
    }
    ASSERT_EQ(queued(), 90);

    std::shared_future<void> released = tables->remove_table(9);
    EXPECT_FALSE(tables->has_table(9));
    expect_faiss_error(
            [&] {
                tables->search_async(9, std::vector<float>(d), 5);
            },
            "unknown table id 9");
    EXPECT_EQ(CountedHNSW::destroyed.load(), 0);
    EXPECT_EQ(
            released.wait_for(std::chrono::milliseconds(0)),
            std::future_status::timeout);

    blockers.release();
    sync_client.join();
    for (int q = 0; q < 30; q++) {
        HNSWQueryResult r = futures[q].get();
        EXPECT_TRUE(std::equal(
                r.labels.begin(),
                r.labels.end(),
                ref.I.begin() + q * 5));
        EXPECT_TRUE(std::equal(
                r.distances.begin(),
                r.distances.end(),
                ref.D.begin() + q * 5));
    }
    EXPECT_EQ(sync, ref);
    ASSERT_EQ(
            released.wait_for(std::chrono::seconds(20)),
            std::future_status::ready);
    pool.wait_idle();
    EXPECT_EQ(callbacks_ok.load(), 30);
    EXPECT_EQ(CountedHNSW::destroyed.load(), 1);
}

// A table that is not owned: after `released`, the caller may free it.
TEST(HNSWTablesLifetime, NotOwnedFreedAfterReleased) {
    const int d = 8;
    const auto base = clustered(600, d, 5, 10);
    CountedHNSW::destroyed = 0;
    auto index = std::make_unique<CountedHNSW>(d, 8);
    index->add(600, base.data());
    const Answer ref = reference(*index, 20, base.data(), 3);
    auto runtime = make_runtime("2x1");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(4, index.get(), false);
    std::shared_future<void> released;
    std::vector<std::future<HNSWQueryResult>> futures;
    {
        Blockers blockers(pool);
        for (int q = 0; q < 20; q++) {
            futures.push_back(tables.search_async(
                    4,
                    {base.begin() + q * d, base.begin() + (q + 1) * d},
                    3));
        }
        released = tables.remove_table(4);
        EXPECT_EQ(
                released.wait_for(std::chrono::milliseconds(0)),
                std::future_status::timeout);
        blockers.release();
    }
    released.wait();
    index.reset(); // now safe: no query holds it
    EXPECT_EQ(CountedHNSW::destroyed.load(), 1);
    for (int q = 0; q < 20; q++) {
        EXPECT_EQ(
                futures[q].get().labels,
                std::vector<idx_t>(
                        ref.I.begin() + q * 3,
                        ref.I.begin() + (q + 1) * 3));
    }
    // Unregistering an idle owned table deletes it at once.
    tables.add_table(5, new CountedHNSW(d, 8), true);
    tables.remove_table(5).wait();
    EXPECT_EQ(CountedHNSW::destroyed.load(), 2);
}

// The registry itself may go while asynchronous queries are queued: they
// keep their table, an owned one is deleted after the last of them.
TEST(HNSWTablesLifetime, DestroyedWithAsyncQueriesInFlight) {
    const int d = 8;
    const auto base = clustered(600, d, 5, 15);
    CountedHNSW::destroyed = 0;
    auto* index = new CountedHNSW(d, 8);
    index->add(600, base.data());
    const Answer ref = reference(*index, 20, base.data(), 3);
    auto runtime = make_runtime("2x1");
    Pool& pool = runtime->pool();
    auto tables = std::make_unique<HNSWTables>(runtime);
    tables->hand_off = 1; // queries as pool tasks, whatever the topology
    tables->add_table(6, index, true);
    std::vector<std::future<HNSWQueryResult>> futures;
    Blockers blockers(pool);
    for (int q = 0; q < 20; q++) {
        futures.push_back(tables->search_async(
                6,
                {base.begin() + q * d, base.begin() + (q + 1) * d},
                3));
    }
    tables.reset();
    EXPECT_EQ(CountedHNSW::destroyed.load(), 0);
    blockers.release();
    for (int q = 0; q < 20; q++) {
        EXPECT_EQ(
                futures[q].get().labels,
                std::vector<idx_t>(
                        ref.I.begin() + q * 3,
                        ref.I.begin() + (q + 1) * 3));
    }
    pool.wait_idle();
    EXPECT_EQ(CountedHNSW::destroyed.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(
        AllPolicies,
        HNSWTablesLifetimePolicies,
        ::testing::Values(
                PolicyKind::ccd,
                PolicyKind::flat_steal,
                PolicyKind::round_robin),
        [](const auto& info) {
            return std::string(policy_name(info.param));
        });

// -------------------------------------------------------- bad input

TEST(HNSWTablesBadInput, ClearErrorsAndPoolStillUsable) {
    const int d = 8;
    const auto base = clustered(500, d, 5, 13);
    auto index = make_hnsw("HNSW8", d, base);
    auto runtime = make_runtime("2x1");
    Pool& pool = runtime->pool();
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(1, index.get(), false);
    const float* x = base.data();
    std::vector<float> D(10 + 4, -7.0f);
    std::vector<idx_t> I(10 + 4, -7);

    expect_faiss_error(
            [&] {
                tables.search(42, 1, x, 10, D.data(), I.data());
            },
            "unknown table id 42");
    expect_faiss_error(
            [&] {
                tables.search(1, 1, x, 0, D.data(), I.data());
            },
            "k must");
    expect_faiss_error(
            [&] {
                tables.search(1, 1, x, -3, D.data(), I.data());
            },
            "k must");
    expect_faiss_error(
            [&] {
                tables.search(1, -1, x, 10, D.data(), I.data());
            },
            "n must");
    expect_faiss_error(
            [&] {
                tables.search(1, 1, nullptr, 10, D.data(), I.data());
            },
            "null");
    expect_faiss_error(
            [&] {
                tables.search(1, 1, x, 10, nullptr, I.data());
            },
            "null");
    expect_faiss_error(
            [&] {
                tables.search(1, 1, x, 10, D.data(), nullptr);
            },
            "null");
    expect_faiss_error(
            [&] {
                tables.search(1, 1, x, 9, 10, D.data(), I.data());
            },
            "dimension 9, table 1 has dimension 8");
    faiss::SearchParametersHNSW zero;
    zero.efSearch = 0;
    expect_faiss_error(
            [&] {
                tables.search(1, 1, x, 10, D.data(), I.data(), &zero);
            },
            "efSearch");
    expect_faiss_error(
            [&] {
                tables.search_async(1, std::vector<float>(9), 10);
            },
            "dimension 9");
    expect_faiss_error(
            [&] {
                tables.search_async(77, std::vector<float>(d), 10);
            },
            "unknown table id 77");
    expect_faiss_error(
            [&] {
                tables.search_async(1, std::vector<float>(d), 0);
            },
            "k must");
    expect_faiss_error(
            [&] {
                tables.search_with_callback(
                        1,
                        std::vector<float>(d),
                        10,
                        HNSWCallback());
            },
            "callback");
    for (int j = 10; j < 14; j++) {
        EXPECT_EQ(D[j], -7.0f);
        EXPECT_EQ(I[j], -7);
    }

    // Registry errors.
    expect_faiss_error(
            [&] {
                tables.add_table(2, nullptr, false);
            },
            "null");
    expect_faiss_error(
            [&] {
                tables.add_table(1, index.get(), false);
            },
            "already taken");
    expect_faiss_error(
            [&] {
                tables.add_table(2, index.get(), true);
            },
            "already table 1");
    expect_faiss_error(
            [&] {
                tables.add_table(0xffffffffu, index.get(), false);
            },
            "reserved");
    expect_faiss_error(
            [&] {
                tables.add_table(2, index.get(), false, 0);
            },
            "ef_search");
    expect_faiss_error(
            [&] {
                tables.set_ef_search(1, -5);
            },
            "ef_search");
    expect_faiss_error(
            [&] {
                tables.set_ef_search(3, 10);
            },
            "unknown");
    expect_faiss_error(
            [&] {
                tables.remove_table(3);
            },
            "unknown table id 3");
    expect_faiss_error(
            [&] {
                tables.dimension(3);
            },
            "unknown table id 3");
    faiss::IndexHNSW2Level two_level;
    expect_faiss_error(
            [&] {
                tables.add_table(2, &two_level, false);
            },
            "IndexHNSW2Level");

    // Still fine.
    EXPECT_EQ(tables.num_tables(), 1u);
    EXPECT_EQ(tables.table_ids(), std::vector<uint32_t>{1});
    EXPECT_EQ(via_tables(tables, 1, 5, x, 10), reference(*index, 5, x, 10));
}

// The tables keep their runtime alive: dropping every other reference
// leaves them searchable.
TEST(HNSWTablesBadInput, TablesKeepTheirRuntime) {
    const int d = 8;
    const auto base = clustered(100, d, 2, 14);
    auto index = make_hnsw("HNSW8", d, base);
    auto runtime = make_runtime("1x1");
    HNSWTables tables(runtime);
    tables.hand_off = 1; // queries as pool tasks, whatever the topology
    tables.add_table(1, index.get(), false);
    runtime.reset();
    EXPECT_EQ(
            via_tables(tables, 1, 5, base.data(), 10),
            reference(*index, 5, base.data(), 10));
    expect_faiss_error(
            [&] {
                HNSWTables nothing(nullptr);
            },
            "runtime is null");
}

} // namespace
