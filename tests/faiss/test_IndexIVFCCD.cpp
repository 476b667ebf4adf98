// IndexIVFCCD: results identical to stock IndexIVF::search on the same
// index, for IVFFlat / IVFPQ / IVFSQ8, L2 and inner product, many shapes;
// range search; many clients; traffic counts; bad input.

#include <faiss/IVFScanCost.h>
#include <faiss/IndexIVFCCD.h>
#include <faiss/ccd_scheduler/Mapping.h>

#include "ivf_test_util.h"

#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/clone_index.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/index_factory.h>

#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace faiss::ccd;
using namespace ivf_test;
using idx_t = faiss::Index::idx_t;

namespace {

using Case = std::tuple<std::string, faiss::MetricType>;

class IVFCCDMatchesStock : public ::testing::TestWithParam<Case> {};

TEST_P(IVFCCDMatchesStock, SearchAllShapes) {
    const auto [key, metric] = GetParam();
    auto ivf = make_index(key, metric);
    size_t empty = 0;
    for (size_t l = 0; l < ivf->nlist; l++) {
        empty += ivf->invlists->list_size(l) == 0;
    }
    ASSERT_GT(empty, 0u) << "the data should leave some lists empty";
    auto runtime = make_runtime("2x2");
    IndexIVFCCD ccd(ivf.get(), runtime, 3);
    ASSERT_TRUE(ccd.uses_scanners());
    int64_t missing_labels = 0;
    for (idx_t n : {1, 7, 1000}) {
        for (idx_t k : {1, 10, 100, 600}) {
            for (size_t nprobe : {size_t(1), size_t(16), size_t(kNlist)}) {
                faiss::SearchParametersIVF params;
                params.nprobe = nprobe;
                std::vector<float> d_ref(n * k), d_got(n * k);
                std::vector<idx_t> i_ref(n * k), i_got(n * k);
                reference_search(
                        *ivf,
                        n,
                        data().queries.data(),
                        k,
                        d_ref.data(),
                        i_ref.data(),
                        &params);
                ccd.search(
                        n,
                        data().queries.data(),
                        k,
                        d_got.data(),
                        i_got.data(),
                        &params);
                expect_same_results(
                        n,
                        k,
                        d_ref,
                        i_ref,
                        d_got,
                        i_got,
                        key + " n=" + std::to_string(n) +
                                " k=" + std::to_string(k) +
                                " nprobe=" + std::to_string(nprobe));
                // Fewer candidates than k: -1 labels, as FAISS.
                const auto ref_missing =
                        std::count(i_ref.begin(), i_ref.end(), -1);
                EXPECT_EQ(
                        std::count(i_got.begin(), i_got.end(), -1),
                        ref_missing);
                missing_labels += ref_missing;
            }
        }
    }
}

// Split lists (tiny chunks) and both scan orders give the same answers.
TEST_P(IVFCCDMatchesStock, ChunkedAndListMajor) {
    const auto [key, metric] = GetParam();
    auto ivf = make_index(key, metric);
    ivf->nprobe = 8;
    auto runtime = make_runtime("2x1");
    IndexIVFCCD ccd(ivf.get(), runtime);
    ccd.split_factor = 0.5;
    ccd.chunk_factor = 0.25;
    ccd.min_chunk = 16;
    const idx_t n = 200, k = 20;
    std::vector<float> d_ref(n * k), d_got(n * k);
    std::vector<idx_t> i_ref(n * k), i_got(n * k);
    reference_search(
            *ivf,
            n,
            data().queries.data(),
            k,
            d_ref.data(),
            i_ref.data());
    for (idx_t min_batch : {idx_t(1), idx_t(1000000)}) {
        ccd.list_major_min_batch = min_batch;
        ccd.search(n, data().queries.data(), k, d_got.data(), i_got.data());
        expect_same_results(
                n,
                k,
                d_ref,
                i_ref,
                d_got,
                i_got,
                key + " min_batch=" + std::to_string(min_batch));
    }
}

// SearchParametersIVFCCD sets the task shape per call, over the index's
// fields: tiny chunks give more tasks than (query, list) pairs, and the
// same answers.
TEST_P(IVFCCDMatchesStock, ShapeFromSearchParameters) {
    const auto [key, metric] = GetParam();
    auto ivf = make_index(key, metric);
    auto runtime = make_runtime("2x1");
    IndexIVFCCD ccd(ivf.get(), runtime);
    // No more queries than workers: shared scan by scan, where lists are
    // cut (a bigger batch is shared query by query, uncut).
    const idx_t n = 2, k = 10;
    SearchParametersIVFCCD params;
    params.nprobe = 8;
    params.split_factor = 0.5;
    params.chunk_factor = 0.25;
    params.min_chunk = 16;
    params.helpers = 1; // lists are cut only for helpers to share
    std::vector<float> d_ref(n * k), d_got(n * k);
    std::vector<idx_t> i_ref(n * k), i_got(n * k);
    reference_search(
            *ivf,
            n,
            data().queries.data(),
            k,
            d_ref.data(),
            i_ref.data(),
            &params);
    const size_t before = ivf_ccd_stats.units;
    ccd.search(
            n,
            data().queries.data(),
            k,
            d_got.data(),
            i_got.data(),
            &params);
    // Scan units (list chunks x queries): more than one per probe only
    // when lists were cut.
    const size_t units = ivf_ccd_stats.units - before;
    expect_same_results(n, k, d_ref, i_ref, d_got, i_got, key + " shape");
    EXPECT_GT(units, size_t(n * params.nprobe)) << "lists were not split";
}

// quantizer_params reach the coarse quantizer, as in IndexIVF::search: a
// selector there keeps the search to the lists it lets through.
TEST_P(IVFCCDMatchesStock, QuantizerParamsReachTheQuantizer) {
    const auto [key, metric] = GetParam();
    auto ivf = make_index(key, metric);
    auto runtime = make_runtime("2x1");
    IndexIVFCCD ccd(ivf.get(), runtime);
    const idx_t n = 30, k = 10;
    faiss::IDSelectorRange first_half(0, kNlist / 2);
    faiss::SearchParameters coarse;
    coarse.sel = &first_half;
    faiss::SearchParametersIVF params;
    params.nprobe = 4;
    params.quantizer_params = &coarse;
    std::vector<float> d_ref(n * k), d_got(n * k), d_all(n * k);
    std::vector<idx_t> i_ref(n * k), i_got(n * k), i_all(n * k);
    reference_search(
            *ivf,
            n,
            data().queries.data(),
            k,
            d_ref.data(),
            i_ref.data(),
            &params);
    ccd.search(
            n,
            data().queries.data(),
            k,
            d_got.data(),
            i_got.data(),
            &params);
    expect_same_results(n, k, d_ref, i_ref, d_got, i_got, key + " sel");
    params.quantizer_params = nullptr;
    ccd.search(
            n,
            data().queries.data(),
            k,
            d_all.data(),
            i_all.data(),
            &params);
    EXPECT_NE(i_all, i_got) << "the selector changed nothing: a weak test";
}

TEST_P(IVFCCDMatchesStock, RangeSearchSameSet) {
    const auto [key, metric] = GetParam();
    auto ivf = make_index(key, metric);
    ivf->nprobe = 8;
    auto runtime = make_runtime("2x2");
    IndexIVFCCD ccd(ivf.get(), runtime);
    const idx_t n = 50;
    // A radius that keeps a few dozen results per query.
    std::vector<float> d(n * 30);
    std::vector<idx_t> i(n * 30);
    ivf->search(n, data().queries.data(), 30, d.data(), i.data());
    const float radius = d[29];
    faiss::RangeSearchResult ref(n), got(n);
    ivf->range_search(n, data().queries.data(), radius, &ref);
    ccd.range_search(n, data().queries.data(), radius, &got);
    size_t total = 0;
    for (idx_t q = 0; q < n; q++) {
        std::set<std::pair<idx_t, float>> a, b;
        for (size_t j = ref.lims[q]; j < ref.lims[q + 1]; j++) {
            a.insert({ref.labels[j], ref.distances[j]});
        }
        for (size_t j = got.lims[q]; j < got.lims[q + 1]; j++) {
            b.insert({got.labels[j], got.distances[j]});
        }
        EXPECT_EQ(a, b) << key << " query " << q;
        total += a.size();
    }
    EXPECT_GT(total, size_t(n)); // the test compares something
}

INSTANTIATE_TEST_SUITE_P(
        Indexes,
        IVFCCDMatchesStock,
        ::testing::Combine(
                ::testing::Values("IVF32,Flat", "IVF32,PQ4", "IVF32,SQ8"),
                ::testing::Values(
                        faiss::METRIC_L2,
                        faiss::METRIC_INNER_PRODUCT)),
        [](const auto& info) {
            std::string name = std::get<0>(info.param);
            name = name.substr(name.find(',') + 1);
            return name +
                    (std::get<1>(info.param) == faiss::METRIC_L2 ? "_L2"
                                                                 : "_IP");
        });

// Eight client threads searching at once on one pool get the answers of
// serial calls.
TEST(IVFCCDClients, EightClientsMatchSerial) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    auto runtime = make_runtime("2x2");
    IndexIVFCCD ccd(ivf.get(), runtime);
    const idx_t k = 10, per_client = 40;
    const int kClients = 8;
    std::vector<float> d_ref(kClients * per_client * k);
    std::vector<idx_t> i_ref(kClients * per_client * k);
    ccd.search(
            kClients * per_client,
            data().queries.data(),
            k,
            d_ref.data(),
            i_ref.data());
    std::vector<float> d_got(d_ref.size());
    std::vector<idx_t> i_got(i_ref.size());
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; c++) {
        clients.emplace_back([&, c] {
            for (idx_t q = c * per_client; q < (c + 1) * per_client; q++) {
                ccd.search(
                        1,
                        data().queries.data() + q * kDim,
                        k,
                        d_got.data() + q * k,
                        i_got.data() + q * k);
            }
        });
    }
    for (auto& t : clients) {
        t.join();
    }
    EXPECT_EQ(d_got, d_ref);
    EXPECT_EQ(i_got, i_ref);
}

// Mapping swaps while clients search (a re-map every millisecond) move
// tasks between CCDs but never change an answer.
TEST(IVFCCDClients, ResultsUnchangedUnderRemaps) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    auto runtime = make_runtime("4x1");
    IndexIVFCCD ccd(ivf.get(), runtime, 2);
    const idx_t n = 100, k = 10;
    std::vector<float> d_ref(n * k);
    std::vector<idx_t> i_ref(n * k);
    reference_search(
            *ivf,
            n,
            data().queries.data(),
            k,
            d_ref.data(),
            i_ref.data());
    std::atomic<bool> done{false};
    std::thread remapper([&] {
        std::vector<MappingId> ids;
        for (uint32_t l = 0; l < kNlist; l++) {
            ids.push_back(make_mapping_id(2, l));
        }
        for (uint64_t round = 1; !done.load(); round++) {
            std::vector<int> ccds(ids.size());
            for (size_t i = 0; i < ids.size(); i++) {
                ccds[i] = int((i * 7 + round) % 4);
            }
            runtime->pool().set_mapping(
                    std::make_shared<MappingSnapshot>(ids, ccds, 4));
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    std::atomic<int> mismatches{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 4; c++) {
        clients.emplace_back([&] {
            std::vector<float> d(n * k);
            std::vector<idx_t> i(n * k);
            for (int r = 0; r < 5; r++) {
                ccd.search(n, data().queries.data(), k, d.data(), i.data());
                mismatches.fetch_add(d != d_ref || i != i_ref);
                for (idx_t q = 0; q < n; q++) { // single queries too
                    ccd.search(
                            1,
                            data().queries.data() + q * kDim,
                            k,
                            d.data() + q * k,
                            i.data() + q * k);
                }
                mismatches.fetch_add(d != d_ref || i != i_ref);
            }
        });
    }
    for (auto& t : clients) {
        t.join();
    }
    done.store(true);
    remapper.join();
    EXPECT_EQ(mismatches.load(), 0);
    EXPECT_GT(runtime->pool().mapping_epoch(), 1u);
}

/// CountingSink: exact per-list totals.
struct CountingSink : TrafficSink {
    std::mutex mutex;
    std::map<MappingId, std::pair<uint64_t, uint64_t>> per_id;
    void record(MappingId id, uint64_t items, uint64_t bytes) noexcept
            override {
        std::lock_guard<std::mutex> lock(mutex);
        per_id[id].first += items;
        per_id[id].second += bytes;
    }
};

TEST(IVFCCDTraffic, CountsAreExact) {
    auto ivf = make_index("IVF32,PQ4", faiss::METRIC_L2);
    const size_t nprobe = 8;
    ivf->nprobe = nprobe;
    auto runtime = make_runtime("2x2");
    IndexIVFCCD ccd(ivf.get(), runtime, 9);
    ccd.min_chunk = 16; // split some lists too
    ccd.split_factor = 1.0;
    ccd.chunk_factor = 0.5;
    // Every shape records: alone (helpers 0); one query split; by query
    // (a unit spans the lists of one CCD); list-major (batch minimum 0).
    struct Case {
        int helpers;
        idx_t list_major_min_batch;
        idx_t n;
    };
    std::vector<Case> cases;
    for (int helpers : {0, 1}) {
        for (idx_t lm : {idx_t(-1), idx_t(0)}) {
            for (idx_t n : {idx_t(1), idx_t(7), idx_t(300)}) {
                cases.push_back({helpers, lm, n});
            }
        }
    }
    for (const Case& c : cases) {
        const idx_t n = c.n;
        CountingSink sink;
        ccd.traffic_sink = &sink;
        ccd.helpers = c.helpers;
        ccd.list_major_min_batch = c.list_major_min_batch;
        std::vector<float> d(n * 5);
        std::vector<idx_t> i(n * 5);
        ccd.search(n, data().queries.data(), 5, d.data(), i.data());
        // Expected: every probed list's size, once per query probing it.
        std::vector<float> cd(n * nprobe);
        std::vector<idx_t> assign(n * nprobe);
        ivf->quantizer->search(
                n,
                data().queries.data(),
                nprobe,
                cd.data(),
                assign.data());
        std::map<MappingId, uint64_t> expected;
        for (idx_t l : assign) {
            size_t size = ivf->invlists->list_size(l);
            if (size > 0) {
                expected[make_mapping_id(9, uint32_t(l))] += size;
            }
        }
        ASSERT_EQ(sink.per_id.size(), expected.size())
                << "n=" << n << " helpers=" << c.helpers
                << " list_major_min_batch=" << c.list_major_min_batch;
        for (auto& [id, vectors] : expected) {
            EXPECT_EQ(sink.per_id[id].first, vectors) << "n=" << n;
            EXPECT_EQ(
                    sink.per_id[id].second,
                    vectors * (ivf->code_size + sizeof(idx_t)));
        }
    }
}

TEST(IVFCCDFallback, FastScanUsesStockSearch) {
    std::unique_ptr<faiss::Index> owner(
            faiss::index_factory(kDim, "IVF32,PQ4x4fs"));
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(owner.get());
    ASSERT_NE(ivf, nullptr);
    ivf->train(4000, data().train.data());
    ivf->add(5000, data().base.data());
    auto runtime = make_runtime("2x1");
    IndexIVFCCD ccd(ivf, runtime);
    EXPECT_FALSE(ccd.uses_scanners());
    std::vector<float> d_ref(70), d_got(70);
    std::vector<idx_t> i_ref(70), i_got(70);
    ivf->search(7, data().queries.data(), 10, d_ref.data(), i_ref.data());
    ccd.search(7, data().queries.data(), 10, d_got.data(), i_got.data());
    EXPECT_EQ(d_got, d_ref);
    EXPECT_EQ(i_got, i_ref);
}

/// expect_faiss_error: the call throws a FaissException whose message
/// contains `needle`.
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

TEST(IVFCCDBadInput, ClearErrorsAndPoolStillUsable) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    auto runtime = make_runtime("2x1");
    IndexIVFCCD ccd(ivf.get(), runtime);
    const float* x = data().queries.data();
    // Guard values after the output arrays catch writes past them.
    std::vector<float> d(10 + 4, -7.0f);
    std::vector<idx_t> i(10 + 4, -7);
    expect_faiss_error(
            [&] {
                ccd.search(1, x, 0, d.data(), i.data());
            },
            "k");
    expect_faiss_error(
            [&] {
                ccd.search(-1, x, 10, d.data(), i.data());
            },
            "n");
    expect_faiss_error(
            [&] {
                ccd.search(1, nullptr, 10, d.data(), i.data());
            },
            "null");
    expect_faiss_error(
            [&] {
                ccd.search(1, x, 10, nullptr, i.data());
            },
            "null");
    faiss::SearchParametersIVF zero;
    zero.nprobe = 0;
    expect_faiss_error(
            [&] {
                ccd.search(1, x, 10, d.data(), i.data(), &zero);
            },
            "nprobe");
    faiss::SearchParameters wrong_type;
    expect_faiss_error(
            [&] {
                ccd.search(1, x, 10, d.data(), i.data(), &wrong_type);
            },
            "incorrect type");
    for (int j = 10; j < 14; j++) {
        EXPECT_EQ(d[j], -7.0f);
        EXPECT_EQ(i[j], -7);
    }
    // nprobe > nlist is clamped, as FAISS does.
    faiss::SearchParametersIVF big;
    big.nprobe = 10 * kNlist;
    EXPECT_NO_THROW(ccd.search(1, x, 10, d.data(), i.data(), &big));
    for (int j = 10; j < 14; j++) {
        EXPECT_EQ(d[j], -7.0f);
    }

    auto untrained = std::unique_ptr<faiss::Index>(
            faiss::index_factory(kDim, "IVF32,Flat"));
    IndexIVFCCD u(dynamic_cast<faiss::IndexIVF*>(untrained.get()), runtime);
    expect_faiss_error(
            [&] {
                u.search(1, x, 10, d.data(), i.data());
            },
            "not trained");
    // An empty index answers as FAISS does: no error, -1 labels.
    auto empty = make_index("IVF32,Flat", faiss::METRIC_L2);
    empty->reset();
    IndexIVFCCD e(empty.get(), runtime);
    e.search(1, x, 10, d.data(), i.data());
    for (int j = 0; j < 10; j++) {
        EXPECT_EQ(i[j], -1);
    }

    // The pool still works after all that.
    std::vector<float> d_ref(10);
    std::vector<idx_t> i_ref(10);
    ivf->search(1, x, 10, d_ref.data(), i_ref.data());
    ccd.search(1, x, 10, d.data(), i.data());
    EXPECT_TRUE(std::equal(d_ref.begin(), d_ref.end(), d.begin()));

    // The index keeps its runtime alive: dropping every other reference
    // leaves it searchable.
    auto kept = make_runtime("1x1");
    IndexIVFCCD holder(ivf.get(), kept);
    kept.reset();
    holder.search(1, x, 10, d.data(), i.data());
    EXPECT_TRUE(std::equal(d_ref.begin(), d_ref.end(), d.begin()));
    expect_faiss_error(
            [] {
                IndexIVFCCD bad(nullptr, nullptr);
            },
            "null");
    auto some = make_runtime("1x1");
    expect_faiss_error(
            [&] {
                IndexIVFCCD bad(nullptr, some);
            },
            "null");
    expect_faiss_error(
            [&] {
                IndexIVFCCD bad(ivf.get(), nullptr);
            },
            "runtime is null");
}

} // namespace
