// Faults injected into searches through the pool, in the manner of FAISS's
// own exception tests: inverted lists and scanners that throw in the middle
// of a query (a FaissException, std::bad_alloc), from the calling thread or
// from a pool worker, with other clients searching at the same time; every
// worker of the pool blocked while searches go on; the default runtime
// replaced and destroyed under running searches and fork() while they run
// are test_FaultsLifetime.cpp's. After each fault the same runtime and index
// answer as stock FAISS does (reference_search: stock IndexIVF::search, one
// OpenMP thread), and the pool goes idle (no task lost or stuck).

#include <faiss/IndexIVFCCD.h>

#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/invlists/InvertedLists.h>

#include <gtest/gtest.h>

#include "ccd_scheduler/fork_test_util.h"
#include "ivf_test_util.h"
#include "searching_clients.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

using namespace ivf_test;
using fork_test::kUnderAsan;
using fork_test::kUnderTsan;
using fork_test::run_in_child;

namespace {

enum class Fault { faiss_error, bad_alloc };

const char* const kInjected = "injected fault";

/// Countdown: throws on its n-th tick after arm(n), once, whichever
/// thread ticks it. fetch_sub hands out each count to exactly one thread,
/// so exactly one tick sees 1 and throws; later ticks see <= 0.
struct Countdown {
    std::atomic<int64_t> left{0};
    std::atomic<int> fired{0};
    std::atomic<int64_t> ticks{0}; ///< every tick, armed or not
    Fault fault = Fault::faiss_error;

    void arm(int64_t n, Fault f) {
        fault = f;
        fired = 0;
        left = n;
    }
    void disarm() {
        left = 0;
    }
    void tick() {
        ticks.fetch_add(1, std::memory_order_relaxed);
        if (left.load(std::memory_order_relaxed) <= 0 ||
            left.fetch_sub(1) != 1) {
            return;
        }
        fired++;
        if (fault == Fault::bad_alloc) {
            throw std::bad_alloc();
        }
        FAISS_THROW_MSG(kInjected);
    }
};

/// FaultyLists: read-only view of another index's inverted lists whose
/// get_codes ticks a Countdown (the scan of a list starts there).
struct FaultyLists : faiss::ReadOnlyInvertedLists {
    const faiss::InvertedLists* base;
    Countdown* faults;

    FaultyLists(const faiss::InvertedLists* b, Countdown* f)
            : ReadOnlyInvertedLists(b->nlist, b->code_size),
              base(b),
              faults(f) {}
    size_t list_size(size_t list_no) const override {
        return base->list_size(list_no);
    }
    const uint8_t* get_codes(size_t list_no) const override {
        faults->tick();
        return base->get_codes(list_no);
    }
    const idx_t* get_ids(size_t list_no) const override {
        return base->get_ids(list_no);
    }
    void release_codes(size_t list_no, const uint8_t* codes) const override {
        base->release_codes(list_no, codes);
    }
    void release_ids(size_t list_no, const idx_t* ids) const override {
        base->release_ids(list_no, ids);
    }
};

/// WithFaultyLists: installs FaultyLists on `ivf` for its lifetime, then
/// gives the index its own lists back.
struct WithFaultyLists {
    faiss::IndexIVF& ivf;
    faiss::InvertedLists* original;
    bool owned;

    WithFaultyLists(faiss::IndexIVF& index, Countdown* faults)
            : ivf(index), original(index.invlists), owned(index.own_invlists) {
        ivf.own_invlists = false;
        ivf.replace_invlists(new FaultyLists(original, faults), true);
    }
    ~WithFaultyLists() {
        ivf.replace_invlists(original, owned);
    }
};

/// FaultyScanner: another scanner whose scans tick a Countdown.
struct FaultyScanner : faiss::InvertedListScanner {
    std::unique_ptr<faiss::InvertedListScanner> inner;
    Countdown* faults;

    FaultyScanner(faiss::InvertedListScanner* s, Countdown* f)
            : InvertedListScanner(s->store_pairs, s->sel), inner(s), faults(f) {
        keep_max = s->keep_max;
        code_size = s->code_size;
    }
    void set_query(const float* x) override {
        inner->set_query(x);
    }
    void set_list(idx_t l, float coarse_dis) override {
        list_no = l;
        inner->set_list(l, coarse_dis);
    }
    float distance_to_code(const uint8_t* code) const override {
        return inner->distance_to_code(code);
    }
    size_t scan_codes(
            size_t n,
            const uint8_t* codes,
            const idx_t* ids,
            float* distances,
            idx_t* labels,
            size_t k) const override {
        faults->tick();
        return inner->scan_codes(n, codes, ids, distances, labels, k);
    }
    void scan_codes_range(
            size_t n,
            const uint8_t* codes,
            const idx_t* ids,
            float radius,
            faiss::RangeQueryResult& result) const override {
        faults->tick();
        inner->scan_codes_range(n, codes, ids, radius, result);
    }
};

/// FaultyScannerIVF: an IndexIVFFlat over another one's quantizer and
/// lists (neither owned) whose scanners are FaultyScanners.
struct FaultyScannerIVF : faiss::IndexIVFFlat {
    Countdown* faults;

    FaultyScannerIVF(faiss::IndexIVFFlat& src, Countdown* f)
            : IndexIVFFlat(src.quantizer, src.d, src.nlist, src.metric_type),
              faults(f) {
        replace_invlists(src.invlists, false);
        ntotal = src.ntotal;
        nprobe = src.nprobe;
    }
    faiss::InvertedListScanner* get_InvertedListScanner(
            bool store_pairs,
            const faiss::IDSelector* sel) const override {
        return new FaultyScanner(
                IndexIVFFlat::get_InvertedListScanner(store_pairs, sel),
                faults);
    }
};

/// Shape: how a search meets the pool: one query with helpers (the fault
/// may be thrown by a worker or by the caller), a small batch scanned
/// query-major, a batch scanned list-major.
struct Shape {
    const char* name;
    idx_t n;
    int helpers;
    idx_t list_major_min_batch;
};
const Shape kShapes[] = {
        {"one_query", 1, 2, -1},
        {"query_major", 40, 2, 1 << 30},
        {"list_major", 200, 2, 64}};

void set_shape(faiss::ccd::IndexIVFCCD& ccd, const Shape& s) {
    ccd.helpers = s.helpers;
    ccd.list_major_min_batch = s.list_major_min_batch;
}

/// search_throws: the search fails with a FaissException that names the
/// fault (FAISS reports a scan's error as "search interrupted with: <type>
/// <what>"); false if it did not throw.
bool search_throws(
        const faiss::Index& index,
        idx_t n,
        idx_t k,
        std::string* message) {
    std::vector<float> D(n * k);
    std::vector<idx_t> I(n * k);
    try {
        index.search(n, data().queries.data(), k, D.data(), I.data());
    } catch (const faiss::FaissException& e) {
        *message = e.what();
        return true;
    }
    return false;
}

void expect_names_fault(const std::string& message, Fault fault) {
    const char* needle = fault == Fault::bad_alloc ? "bad_alloc" : kInjected;
    EXPECT_NE(message.find(needle), std::string::npos) << message;
}

void expect_stock(
        const faiss::Index& index,
        const Answer& ref,
        idx_t n,
        idx_t k) {
    std::vector<float> D(n * k);
    std::vector<idx_t> I(n * k);
    index.search(n, data().queries.data(), k, D.data(), I.data());
    EXPECT_EQ(D, ref.D);
    EXPECT_EQ(I, ref.I);
}

// ------------------------------------------------------ one client

class FaultsInScans
        : public ::testing::TestWithParam<std::tuple<bool, Fault, int>> {};

// A throw on the first, a middle or the last list scan of a search (as
// counted by a clean run of the same search), from the lists
// or from the scanner, as a FaissException or bad_alloc, in each shape: the
// search reports it, the pool goes idle, and the next search answers as
// stock.
TEST_P(FaultsInScans, ThrowMidQueryThenAnswerAsStock) {
    const bool in_scanner = std::get<0>(GetParam());
    const Fault fault = std::get<1>(GetParam());
    const Shape& shape = kShapes[std::get<2>(GetParam())];
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    auto* flat = dynamic_cast<faiss::IndexIVFFlat*>(ivf.get());
    ASSERT_NE(flat, nullptr);
    const idx_t k = 10;
    const Answer ref = stock(*ivf, shape.n, k);
    Countdown faults;
    FaultyScannerIVF scanner_ivf(*flat, &faults);
    std::unique_ptr<WithFaultyLists> lists;
    faiss::IndexIVF* target = &scanner_ivf;
    if (!in_scanner) {
        lists.reset(new WithFaultyLists(*ivf, &faults));
        target = ivf.get();
    }
    auto runtime = make_runtime("2x1");
    faiss::ccd::IndexIVFCCD ccd(target, runtime, 7);
    set_shape(ccd, shape);
    // A clean search counts the ticks (list scans) it makes: the fault
    // goes at the first, the middle and the last of them.
    expect_stock(ccd, ref, shape.n, k);
    const int64_t scans = faults.ticks.load();
    ASSERT_GT(scans, 0);
    for (int64_t at : {int64_t(1), (scans + 1) / 2, scans}) {
        SCOPED_TRACE(
                "throw at tick " + std::to_string(at) + " of " +
                std::to_string(scans));
        faults.arm(at, fault);
        std::string message;
        ASSERT_TRUE(search_throws(ccd, shape.n, k, &message));
        EXPECT_EQ(faults.fired.load(), 1);
        expect_names_fault(message, fault);
        runtime->pool().wait_idle();
        faults.disarm();
        expect_stock(ccd, ref, shape.n, k);
    }
}

INSTANTIATE_TEST_SUITE_P(
        Faults,
        FaultsInScans,
        ::testing::Combine(
                ::testing::Bool(),
                ::testing::Values(Fault::faiss_error, Fault::bad_alloc),
                ::testing::Values(0, 1, 2)),
        [](const auto& info) {
            return std::string(
                           std::get<0>(info.param) ? "scanner_" : "lists_") +
                    (std::get<1>(info.param) == Fault::bad_alloc ? "bad_alloc_"
                                                                 : "faiss_") +
                    kShapes[std::get<2>(info.param)].name;
        });

// The same through the fork's own IndexIVF in PARALLEL_MODE_CCD, and for
// a range search.
TEST(Faults, ParallelModeCCDAndRangeSearch) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    const idx_t n = 30, k = 10;
    const Answer ref = stock(*ivf, n, k);
    faiss::RangeSearchResult range_ref(n);
    ivf->range_search(n, data().queries.data(), 10.0f, &range_ref);
    auto runtime = make_runtime("2x1");
    faiss::ccd::SearchParametersIVFCCD params;
    params.runtime = runtime.get();
    params.nprobe = 8;
    params.helpers = 2;
    Countdown faults;
    {
        WithFaultyLists lists(*ivf, &faults);
        ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
        std::vector<float> D(n * k);
        std::vector<idx_t> I(n * k);
        faults.arm(5, Fault::faiss_error);
        EXPECT_THROW(
                ivf->search(
                        n,
                        data().queries.data(),
                        k,
                        D.data(),
                        I.data(),
                        &params),
                faiss::FaissException);
        faults.arm(5, Fault::bad_alloc);
        faiss::RangeSearchResult r(n);
        EXPECT_THROW(
                ivf->range_search(n, data().queries.data(), 10.0f, &r, &params),
                faiss::FaissException);
        runtime->pool().wait_idle();
        faults.disarm();
        ivf->search(n, data().queries.data(), k, D.data(), I.data(), &params);
        EXPECT_EQ(D, ref.D);
        EXPECT_EQ(I, ref.I);
        faiss::RangeSearchResult again(n);
        ivf->range_search(n, data().queries.data(), 10.0f, &again, &params);
        ASSERT_EQ(
                std::vector<size_t>(again.lims, again.lims + n + 1),
                std::vector<size_t>(range_ref.lims, range_ref.lims + n + 1));
        const size_t total = range_ref.lims[n];
        EXPECT_EQ(
                std::vector<idx_t>(again.labels, again.labels + total),
                std::vector<idx_t>(range_ref.labels, range_ref.labels + total));
        ivf->parallel_mode = 0;
    }
}

// ------------------------------------------------------ many clients

// Eight clients search one index while one fault is armed: exactly one
// search fails, with the fault's message; every other search answers as
// stock, during the fault and after it.
TEST(Faults, OneFaultAmongEightClients) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    const idx_t n = 8, k = 10;
    const Answer ref = stock(*ivf, n, k);
    Countdown faults;
    WithFaultyLists lists(*ivf, &faults);
    auto runtime = make_runtime("2x2");
    faiss::ccd::IndexIVFCCD ccd(ivf.get(), runtime, 3);
    ccd.helpers = 1;
    for (int round = 0; round < 5; round++) {
        faults.arm(20 + 13 * round, Fault::faiss_error);
        std::atomic<int> failed{0}, wrong{0};
        std::vector<std::thread> clients;
        for (int c = 0; c < 8; c++) {
            clients.emplace_back([&] {
                for (int q = 0; q < 6; q++) {
                    std::vector<float> D(n * k);
                    std::vector<idx_t> I(n * k);
                    try {
                        ccd.search(
                                n,
                                data().queries.data(),
                                k,
                                D.data(),
                                I.data());
                    } catch (const faiss::FaissException& e) {
                        failed++;
                        if (std::string(e.what()).find(kInjected) ==
                            std::string::npos) {
                            wrong++;
                        }
                        continue;
                    }
                    if (D != ref.D || I != ref.I) {
                        wrong++;
                    }
                }
            });
        }
        for (auto& t : clients) {
            t.join();
        }
        // 8 clients x 6 searches x 8 queries x 8 probes = 3072 scans,
        // far past the armed tick.
        EXPECT_EQ(faults.fired.load(), 1) << "round " << round;
        EXPECT_EQ(failed.load(), 1) << "round " << round;
        EXPECT_EQ(wrong.load(), 0) << "round " << round;
        runtime->pool().wait_idle();
    }
    faults.disarm();
    expect_stock(ccd, ref, n, k);
}

// Every worker of the pool is held by a task that does not return until
// the clients have done their searches: the searches still finish (the
// calling thread scans what no helper takes), with stock's answers. Their
// latency while the workers are held, and after, is printed.
TEST(Faults, SearchesFlowWhileEveryWorkerIsBlocked) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    const idx_t n = 4, k = 10;
    const Answer ref = stock(*ivf, n, k);
    // Threshold 1, so that a blocker stolen across CCDs cannot leave
    // another queued alone on a busy CCD (the default keeps it home).
    PoolOptions options;
    options.steal.cross_ccd_threshold = 1;
    auto runtime = Runtime::create(
            RuntimeOptions().set_topology("2x2").set_pool(options).set_monitor(
                    false));
    faiss::ccd::IndexIVFCCD ccd(ivf.get(), runtime, 4);
    const int kClients = 4, kSearches = 50;
    auto run_clients = [&](int helpers, std::vector<double>* ms) {
        ccd.helpers = helpers;
        std::atomic<int> wrong{0};
        std::vector<std::vector<double>> per(kClients);
        std::vector<std::thread> clients;
        for (int c = 0; c < kClients; c++) {
            clients.emplace_back([&, c] {
                for (int q = 0; q < kSearches; q++) {
                    std::vector<float> D(n * k);
                    std::vector<idx_t> I(n * k);
                    const auto t0 = std::chrono::steady_clock::now();
                    ccd.search(n, data().queries.data(), k, D.data(), I.data());
                    per[c].push_back(
                            std::chrono::duration<double, std::milli>(
                                    std::chrono::steady_clock::now() - t0)
                                    .count());
                    wrong += D != ref.D || I != ref.I;
                }
            });
        }
        for (auto& t : clients) {
            t.join();
        }
        for (auto& p : per) {
            ms->insert(ms->end(), p.begin(), p.end());
        }
        return wrong.load();
    };
    auto p99 = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[std::min(v.size() - 1, size_t(0.99 * v.size()))];
    };
    for (int helpers : {-1, 2}) {
        SCOPED_TRACE("helpers " + std::to_string(helpers));
        std::vector<double> blocked_ms, free_ms;
        {
            // The blockers hold every worker until the gate opens, which
            // happens once the clients are done (or after 120 s: a search
            // that needed a worker would wait until then, and fail).
            std::promise<void> gate;
            std::shared_future<void> opened = gate.get_future().share();
            std::atomic<int> started{0};
            Pool& pool = runtime->pool();
            for (int w = 0; w < pool.num_workers(); w++) {
                pool.submit(kLocalMappingId, [&started, opened] {
                    started++;
                    opened.wait();
                });
            }
            while (started.load() < pool.num_workers()) {
                std::this_thread::yield();
            }
            auto searching = std::async(std::launch::async, [&] {
                return run_clients(helpers, &blocked_ms);
            });
            const bool finished =
                    searching.wait_for(std::chrono::seconds(120)) ==
                    std::future_status::ready;
            EXPECT_TRUE(finished) << "searches waited for blocked workers";
            gate.set_value();
            EXPECT_EQ(searching.get(), 0);
            pool.wait_idle();
        }
        EXPECT_EQ(run_clients(helpers, &free_ms), 0);
        std::printf(
                "helpers %d: %d searches of %d queries by %d clients, every "
                "worker blocked: P99 %.3f ms; unblocked: P99 %.3f ms\n",
                helpers,
                kClients * kSearches,
                int(n),
                kClients,
                p99(blocked_ms),
                p99(free_ms));
        RecordProperty(
                "p99_ms_blocked_helpers" + std::to_string(helpers + 1),
                std::to_string(p99(blocked_ms)));
    }
}

} // namespace
