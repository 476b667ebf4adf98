// Soak: 32 client threads for FAISS_CCD_SOAK_S seconds (default 4; the
// documented long run, docs/RELIABILITY.md, is 600) on one runtime whose
// monitor re-maps as often as it may, while a storm thread swaps random
// mappings in between. The clients mix IVF k-NN searches (one query and
// small batches, through IndexIVFCCD), IVF range searches, HNSW table
// searches and searches of a private index whose parallel_mode they switch
// between 0 and PARALLEL_MODE_CCD. Checked:
//  - every answer equals the stock answer computed serially beforehand
//    (every answer, not a sample);
//  - every list scan of every IVF search through IndexIVFCCD ran exactly
//    once: a counting sink totals the vectors scanned, which must equal
//    the sizes of the lists the searches probed (a lost scan or a repeated
//    one changes the total);
//  - the pool ends idle, and every client finished;
//  - resident memory after the first quarter (warm-up) grows by less than
//    16 MiB (not under sanitizers: their allocators hold memory back).
// Printed: operations, P50 / P99 / P999 per kind, re-maps, RSS.

#include <faiss/HNSWTables.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFCCD.h>
#include <faiss/impl/AuxIndexStructures.h>

#include <gtest/gtest.h>

#include "ivf_test_util.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace ivf_test;

namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

double soak_seconds() {
    const char* s = std::getenv("FAISS_CCD_SOAK_S");
    return s && *s ? std::atof(s) : 4.0;
}

size_t rss_bytes() {
    std::ifstream statm("/proc/self/statm");
    size_t pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * size_t(sysconf(_SC_PAGESIZE));
}

/// TeeSink: totals the vectors scanned and passes every record on.
struct TeeSink : TrafficSink {
    TrafficSink* next = nullptr;
    std::atomic<uint64_t> items{0};
    void record(MappingId id, uint64_t n, uint64_t bytes) noexcept override {
        items.fetch_add(n, std::memory_order_relaxed);
        if (next) {
            next->record(id, n, bytes);
        }
    }
};

enum Op { kKnnOne, kKnnBatch, kRange, kHnsw, kModeSwitch, kNumOps };
const char* const kOpNames[kNumOps] =
        {"ivf knn 1", "ivf knn 2-8", "ivf range", "hnsw", "mode switch"};

const int kQueries = 64; ///< queries with precomputed answers
const idx_t kK = 10;
const float kRadius = 10.0f;
const int kClients = 32;

struct Rows {
    std::vector<float> D;
    std::vector<idx_t> I;
};

/// RangeRows: one query's range answer.
struct RangeRows {
    std::vector<float> D;
    std::vector<idx_t> I;
};

/// Histogram: latencies in buckets 2% wide from 1 us to ~1000 s, of a
/// fixed size, so that recording them does not grow the heap the test
/// watches (a vector of every latency did: 200 MB over 10 minutes).
struct Histogram {
    static constexpr double kLow = 1e-3; ///< ms
    static constexpr double kGrowth = 1.02;
    static constexpr int kBuckets = 1100;
    std::vector<uint64_t> counts = std::vector<uint64_t>(kBuckets, 0);
    uint64_t total = 0;

    void add(double ms) {
        const int b = ms <= kLow
                ? 0
                : int(std::log(ms / kLow) / std::log(kGrowth)) + 1;
        counts[std::min(b, kBuckets - 1)]++;
        total++;
    }
    void merge(const Histogram& o) {
        for (int b = 0; b < kBuckets; b++) {
            counts[b] += o.counts[b];
        }
        total += o.total;
    }
    /// percentile: the upper edge of the bucket holding the p-quantile.
    double percentile(double p) const {
        uint64_t seen = 0;
        const uint64_t want = uint64_t(p * double(total));
        for (int b = 0; b < kBuckets; b++) {
            seen += counts[b];
            if (seen > want) {
                return kLow * std::pow(kGrowth, b);
            }
        }
        return 0;
    }
};

struct Latencies {
    std::mutex mutex;
    Histogram ms[kNumOps];
    void add(Op op, const Histogram& h) {
        std::lock_guard<std::mutex> lock(mutex);
        ms[op].merge(h);
    }
};

TEST(Soak, MixedClientsUnderRemaps) {
    const double seconds = soak_seconds();
    // Shared IVF index, one query at a time as reference (stock, serial).
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    const float* xq = data().queries.data();
    std::vector<Rows> knn(kQueries);
    std::vector<RangeRows> range(kQueries);
    std::vector<uint64_t> probed_codes(kQueries, 0);
    for (int q = 0; q < kQueries; q++) {
        knn[q].D.resize(kK);
        knn[q].I.resize(kK);
        reference_search(
                *ivf,
                1,
                xq + q * kDim,
                kK,
                knn[q].D.data(),
                knn[q].I.data());
        faiss::RangeSearchResult r(1);
        ivf->range_search(1, xq + q * kDim, kRadius, &r);
        range[q].D.assign(r.distances, r.distances + r.lims[1]);
        range[q].I.assign(r.labels, r.labels + r.lims[1]);
        std::vector<float> cd(ivf->nprobe);
        std::vector<idx_t> lists(ivf->nprobe);
        ivf->quantizer->search(
                1,
                xq + q * kDim,
                ivf->nprobe,
                cd.data(),
                lists.data());
        for (idx_t l : lists) {
            probed_codes[q] += l >= 0 ? ivf->invlists->list_size(l) : 0;
        }
    }
    // Private indexes whose mode their client switches.
    std::vector<std::unique_ptr<faiss::IndexIVF>> own;
    for (int c = 0; c < kClients; c += 8) {
        own.push_back(make_index("IVF32,Flat", faiss::METRIC_L2));
        own.back()->nprobe = 8;
    }
    // HNSW tables, one query at a time as reference.
    const int hd = 16;
    const auto hbase = clustered(2000, 20, 11, 0.8f);
    std::unique_ptr<faiss::IndexHNSW> hnsw[2];
    std::vector<Rows> href[2];
    for (int t = 0; t < 2; t++) {
        hnsw[t].reset(new faiss::IndexHNSWFlat(hd, 16));
        hnsw[t]->add(1000, hbase.data() + t * 1000 * hd);
        for (int q = 0; q < kQueries; q++) {
            Rows r{std::vector<float>(kK), std::vector<idx_t>(kK)};
            hnsw[t]->search(1, xq + q * kDim, kK, r.D.data(), r.I.data());
            href[t].push_back(r);
        }
    }

    MonitorConfig mc;
    mc.fast_window_s = 0.5;
    mc.slow_window_s = 2;
    mc.bucket_s = 0.1;
    mc.min_remap_interval_s = 0.05;
    mc.imbalance_threshold = 1.05;
    auto runtime = Runtime::create(RuntimeOptions()
                                           .set_topology("4x2")
                                           .set_monitor(true, 0.02)
                                           .set_monitor_config(mc));
    Runtime::set_default(runtime);
    TeeSink sink;
    sink.next = runtime->traffic_sink();
    faiss::ccd::IndexIVFCCD ccd(ivf.get(), runtime, 1);
    ccd.traffic_sink = &sink;
    faiss::ccd::HNSWTables tables(runtime);
    tables.add_table(10, hnsw[0].get(), false);
    tables.add_table(11, hnsw[1].get(), false);

    std::atomic<bool> stop{false};
    std::atomic<uint64_t> expected_items{0}, wrong{0}, ops{0}, storms{0};
    std::atomic<int> finished{0};
    Latencies lat;
    std::thread storm([&] {
        std::mt19937 rng(99);
        std::vector<MappingId> ids;
        for (uint32_t l = 0; l < uint32_t(kNlist); l++) {
            ids.push_back(make_mapping_id(1, l));
        }
        ids.push_back(make_mapping_id(10, 0));
        ids.push_back(make_mapping_id(11, 0));
        while (!stop.load()) {
            std::vector<int> ccds(ids.size());
            for (int& c : ccds) {
                c = int(rng() % 4);
            }
            runtime->pool().set_mapping(
                    std::make_shared<MappingSnapshot>(ids, ccds, 4));
            storms++;
            std::this_thread::sleep_for(std::chrono::milliseconds(3));
        }
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - t0)
                .count();
    };
    size_t rss_warm = 0;
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; c++) {
        clients.emplace_back([&, c] {
            std::mt19937 rng(1000 + c);
            Histogram ms[kNumOps];
            std::vector<float> D(8 * kK);
            std::vector<idx_t> I(8 * kK);
            faiss::IndexIVF* mine = c % 8 == 0 ? own[c / 8].get() : nullptr;
            while (!stop.load(std::memory_order_relaxed)) {
                Op op = Op(rng() % (mine ? kNumOps : kNumOps - 1));
                const int n = op == kKnnBatch ? 2 + int(rng() % 7)
                        : op == kRange        ? 1 + int(rng() % 3)
                                              : 1;
                const int q0 = int(rng() % (kQueries - n + 1));
                const float* x = xq + q0 * kDim;
                const auto s = std::chrono::steady_clock::now();
                uint64_t bad = 0;
                switch (op) {
                    case kKnnOne:
                    case kKnnBatch: {
                        ccd.search(n, x, kK, D.data(), I.data());
                        for (int i = 0; i < n; i++) {
                            expected_items += probed_codes[q0 + i];
                            bad += !std::equal(
                                           knn[q0 + i].D.begin(),
                                           knn[q0 + i].D.end(),
                                           D.begin() + i * kK) ||
                                    !std::equal(
                                            knn[q0 + i].I.begin(),
                                            knn[q0 + i].I.end(),
                                            I.begin() + i * kK);
                        }
                        break;
                    }
                    case kRange: {
                        faiss::RangeSearchResult r(n);
                        ccd.range_search(n, x, kRadius, &r);
                        for (int i = 0; i < n; i++) {
                            expected_items += probed_codes[q0 + i];
                            const RangeRows& want = range[q0 + i];
                            bad += r.lims[i + 1] - r.lims[i] != want.I.size() ||
                                    !std::equal(
                                            want.I.begin(),
                                            want.I.end(),
                                            r.labels + r.lims[i]) ||
                                    !std::equal(
                                            want.D.begin(),
                                            want.D.end(),
                                            r.distances + r.lims[i]);
                        }
                        break;
                    }
                    case kHnsw: {
                        const int t = int(rng() % 2);
                        tables.search(10 + t, 1, x, kK, D.data(), I.data());
                        bad += !std::equal(
                                       href[t][q0].D.begin(),
                                       href[t][q0].D.end(),
                                       D.begin()) ||
                                !std::equal(
                                        href[t][q0].I.begin(),
                                        href[t][q0].I.end(),
                                        I.begin());
                        break;
                    }
                    case kModeSwitch: {
                        mine->parallel_mode = mine->parallel_mode == 0
                                ? faiss::PARALLEL_MODE_CCD
                                : 0;
                        mine->search(1, x, kK, D.data(), I.data());
                        bad += !std::equal(
                                       knn[q0].D.begin(),
                                       knn[q0].D.end(),
                                       D.begin()) ||
                                !std::equal(
                                        knn[q0].I.begin(),
                                        knn[q0].I.end(),
                                        I.begin());
                        break;
                    }
                    default:
                        break;
                }
                ms[op].add(std::chrono::duration<double, std::milli>(
                                   std::chrono::steady_clock::now() - s)
                                   .count());
                wrong += bad;
                ops++;
            }
            for (int o = 0; o < kNumOps; o++) {
                lat.add(Op(o), ms[o]);
            }
            finished++;
        });
    }
    while (elapsed() < seconds) {
        if (rss_warm == 0 && elapsed() > seconds / 4) {
            rss_warm = rss_bytes();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const size_t rss_end = rss_bytes();
    stop = true;
    for (auto& t : clients) {
        t.join();
    }
    storm.join();
    runtime->pool().wait_idle();
    const MonitorStats mstats = runtime->monitor()->stats();
    Runtime::set_default(nullptr);

    EXPECT_EQ(finished.load(), kClients);
    EXPECT_EQ(wrong.load(), 0u) << "answers that differ from stock's";
    EXPECT_EQ(sink.items.load(), expected_items.load())
            << "vectors scanned vs the probed lists' sizes: a scan was lost "
               "or repeated";
    EXPECT_GT(ops.load(), uint64_t(kClients));
    std::printf(
            "soak: %.1f s, %d clients, %llu operations, %llu mapping swaps, "
            "%zu monitor re-maps, %llu vectors scanned (as expected: %s)\n",
            seconds,
            kClients,
            (unsigned long long)ops.load(),
            (unsigned long long)storms.load(),
            mstats.remaps,
            (unsigned long long)sink.items.load(),
            sink.items.load() == expected_items.load() ? "yes" : "NO");
    for (int o = 0; o < kNumOps; o++) {
        const Histogram& h = lat.ms[o];
        std::printf(
                "  %-12s %7llu ops  P50 %8.3f ms  P99 %8.3f ms  P999 %8.3f "
                "ms\n",
                kOpNames[o],
                (unsigned long long)h.total,
                h.percentile(0.5),
                h.percentile(0.99),
                h.percentile(0.999));
        RecordProperty(
                std::string("p999_ms_") + std::to_string(o),
                std::to_string(h.percentile(0.999)));
    }
    std::printf(
            "  RSS after warm-up %.1f MiB, at the end %.1f MiB\n",
            rss_warm / 1048576.0,
            rss_end / 1048576.0);
    if (!kSanitized && rss_warm > 0) {
        EXPECT_LT(double(rss_end), double(rss_warm) + 16.0 * 1048576)
                << "resident memory grew after warm-up";
    }
}

} // namespace
