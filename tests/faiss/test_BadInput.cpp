// Bad input to every public C++ entry point, as one table: topology specs,
// policy names, runtime, pool and monitor options, IndexIVFCCD searches and
// their per-call parameters, the parallel mode, HNSWTables; null pointers,
// negative and huge sizes, NaN and infinity, unknown ids, calls after a
// table is gone. Each row either throws the exception type it names with
// a message that names the problem, or (NaN and infinity in queries)
// answers exactly as stock FAISS answers the same call. The table counts
// its rows; after all of them the same runtime still answers as stock.
// (tests/python/test_bad_input.py is the Python table; tests/c_api/ the
// C API's error paths.)

#include <faiss/HNSWTables.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFCCD.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>

#include <gtest/gtest.h>

#include "ivf_test_util.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ivf_test;

namespace {

enum class Expect { faiss_error, invalid_argument, as_stock };

struct Row {
    const char* entry;  ///< the entry point
    const char* input;  ///< what is wrong with the call
    Expect expect;      ///< how it must end
    const char* needle; ///< in the message (errors)
    std::function<void()> call;
    /// as_stock: returns whether the answer equals stock's.
    std::function<bool()> check;
};

/// run_row: "" when the row ended as it must, else why not.
std::string run_row(const Row& r) {
    try {
        if (r.expect == Expect::as_stock) {
            return r.check() ? "" : "answer differs from stock's";
        }
        r.call();
        return "no exception";
    } catch (const faiss::FaissException& e) {
        if (r.expect != Expect::faiss_error) {
            return std::string("FaissException: ") + e.what();
        }
        return std::string(e.what()).find(r.needle) == std::string::npos
                ? std::string("message lacks \"") + r.needle + "\": " + e.what()
                : "";
    } catch (const std::invalid_argument& e) {
        if (r.expect != Expect::invalid_argument) {
            return std::string("invalid_argument: ") + e.what();
        }
        return std::string(e.what()).find(r.needle) == std::string::npos
                ? std::string("message lacks \"") + r.needle + "\": " + e.what()
                : "";
    } catch (const std::exception& e) {
        return std::string("other exception: ") + e.what();
    }
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(BadInput, EveryCppEntryPoint) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    auto runtime = make_runtime("2x1");
    faiss::ccd::IndexIVFCCD ccd(ivf.get(), runtime, 2);
    const float* x = data().queries.data();
    const idx_t k = 5;
    std::vector<float> D(4 * k);
    std::vector<idx_t> I(4 * k);
    faiss::RangeSearchResult rr(1);

    std::unique_ptr<faiss::IndexHNSW> hnsw(new faiss::IndexHNSWFlat(kDim, 8));
    hnsw->add(500, data().base.data());
    faiss::ccd::HNSWTables tables(runtime);
    tables.add_table(3, hnsw.get(), false);
    std::unique_ptr<faiss::IndexHNSW> gone(new faiss::IndexHNSWFlat(kDim, 8));
    gone->add(100, data().base.data());
    tables.add_table(4, gone.get(), false);
    tables.remove_table(4).wait();

    // Queries with NaN or infinity somewhere.
    std::vector<float> odd(3 * kDim);
    std::copy(x, x + odd.size(), odd.begin());
    odd[1] = kNaN;
    odd[kDim + 3] = kInf;
    odd[2 * kDim + 5] = -kInf;
    // as_stock for IVF: the CCD mode and stock (one thread) agree.
    auto ivf_as_stock = [&](const std::vector<float>& q) {
        const idx_t n = idx_t(q.size() / kDim);
        std::vector<float> d1(n * k), d2(n * k);
        std::vector<idx_t> i1(n * k), i2(n * k);
        ccd.search(n, q.data(), k, d1.data(), i1.data());
        reference_search(*ivf, n, q.data(), k, d2.data(), i2.data());
        auto same = [](float a, float b) {
            return a == b || (std::isnan(a) && std::isnan(b));
        };
        return std::equal(d1.begin(), d1.end(), d2.begin(), same) && i1 == i2;
    };
    auto hnsw_as_stock = [&](const std::vector<float>& q) {
        const idx_t n = idx_t(q.size() / kDim);
        std::vector<float> d1(n * k), d2(n * k);
        std::vector<idx_t> i1(n * k), i2(n * k);
        tables.search(3, n, q.data(), k, d1.data(), i1.data());
        for (idx_t j = 0; j < n; j++) { // stock, one query at a time
            hnsw->search(1, q.data() + j * kDim, k, &d2[j * k], &i2[j * k]);
        }
        auto same = [](float a, float b) {
            return a == b || (std::isnan(a) && std::isnan(b));
        };
        return std::equal(d1.begin(), d1.end(), d2.begin(), same) && i1 == i2;
    };
    auto with_ccd_params =
            [&](std::function<void(faiss::ccd::SearchParametersIVFCCD&)> set) {
                return [&, set] {
                    faiss::ccd::SearchParametersIVFCCD p;
                    set(p);
                    ccd.search(1, x, k, D.data(), I.data(), &p);
                };
            };
    // The fork's IndexIVF with SearchParametersIVFCCD (IndexIVFCCD sets
    // table_id itself).
    auto with_ivf_params =
            [&](std::function<void(faiss::ccd::SearchParametersIVFCCD&)> set) {
                return [&, set] {
                    faiss::ccd::SearchParametersIVFCCD p;
                    p.runtime = runtime.get();
                    set(p);
                    ivf->search(1, x, k, D.data(), I.data(), &p);
                };
            };
    auto runtime_with = [](std::function<void(RuntimeOptions&)> set) {
        return [set] {
            RuntimeOptions o = RuntimeOptions().set_topology("1x1");
            set(o);
            Runtime r(o);
        };
    };
    const Expect FE = Expect::faiss_error, IA = Expect::invalid_argument,
                 AS = Expect::as_stock;

    const std::vector<Row> rows = {
            // ---- Topology (every runtime starts here)
            {"Topology::from_spec",
             "empty",
             IA,
             "",
             [] {
                 Topology::from_spec("");
             }},
            {"Topology::from_spec",
             "0 CCDs",
             IA,
             "CCD count",
             [] {
                 Topology::from_spec("0x2");
             }},
            {"Topology::from_spec",
             "0 workers",
             IA,
             "worker count",
             [] {
                 Topology::from_spec("2x0");
             }},
            {"Topology::from_spec",
             "negative",
             IA,
             "",
             [] {
                 Topology::from_spec("-2x2");
             }},
            {"Topology::from_spec",
             "huge",
             IA,
             "",
             [] {
                 Topology::from_spec("99999999999x99999999999");
             }},
            {"Topology::from_spec",
             "garbage",
             IA,
             "",
             [] {
                 Topology::from_spec("two by two");
             }},
            {"Topology::from_spec",
             "reversed CPU range",
             IA,
             "",
             [] {
                 Topology::from_spec("3-1");
             }},
            {"Topology::from_spec",
             "CPU twice",
             IA,
             "",
             [] {
                 Topology::from_spec("0-1;1-2");
             }},
            {"Topology::from_string",
             "garbage",
             IA,
             "",
             [] {
                 Topology::from_string("fast please");
             }},
            {"policy_from_name",
             "unknown",
             IA,
             "bogus",
             [] {
                 policy_from_name("bogus");
             }},
            {"policy_from_name",
             "empty",
             IA,
             "",
             [] {
                 policy_from_name("");
             }},
            // ---- Runtime, pool and monitor options
            {"Runtime", "bad topology", IA, "", runtime_with([](auto& o) {
                 o.topology = "0x0";
             })},
            {"Runtime",
             "monitor period NaN",
             IA,
             "period",
             runtime_with([](auto& o) {
                 o.monitor_period_s = std::nan("");
             })},
            {"Runtime",
             "monitor period < 0",
             IA,
             "period",
             runtime_with([](auto& o) {
                 o.monitor_period_s = -1;
             })},
            {"Runtime",
             "monitor period huge",
             IA,
             "period",
             runtime_with([](auto& o) {
                 o.monitor_period_s = 1e12;
             })},
            {"Runtime",
             "cross_ccd_threshold -2",
             IA,
             "cross_ccd_threshold",
             runtime_with([](auto& o) {
                 o.pool.steal.cross_ccd_threshold = -2;
             })},
            {"Runtime",
             "max_backoff_shift 31",
             IA,
             "max_backoff_shift",
             runtime_with([](auto& o) {
                 o.pool.steal.max_backoff_shift = 31;
             })},
            {"Runtime",
             "imbalance_threshold < 1",
             IA,
             "imbalance_threshold",
             runtime_with([](auto& o) {
                 o.monitor_config.imbalance_threshold = 0.5;
             })},
            {"Runtime",
             "imbalance_threshold NaN",
             IA,
             "imbalance_threshold",
             runtime_with([](auto& o) {
                 o.monitor_config.imbalance_threshold = std::nan("");
             })},
            {"Runtime", "fast window 0", IA, "", runtime_with([](auto& o) {
                 o.monitor_config.fast_window_s = 0;
             })},
            {"Runtime", "fast window NaN", IA, "", runtime_with([](auto& o) {
                 o.monitor_config.fast_window_s = std::nan("");
             })},
            {"Runtime", "bucket < 0", IA, "", runtime_with([](auto& o) {
                 o.monitor_config.bucket_s = -1;
             })},
            {"Runtime",
             "fast window infinite",
             IA,
             "",
             runtime_with([](auto& o) {
                 o.monitor_config.fast_window_s =
                         std::numeric_limits<double>::infinity();
             })},
            {"Runtime", "bucket denormal", IA, "", runtime_with([](auto& o) {
                 o.monitor_config.bucket_s = 1e-300;
             })},
            // ---- IndexIVFCCD
            {"IndexIVFCCD()",
             "null index",
             FE,
             "null",
             [&] {
                 faiss::ccd::IndexIVFCCD bad(nullptr, runtime);
             }},
            {"IndexIVFCCD()",
             "null runtime",
             FE,
             "null",
             [&] {
                 faiss::ccd::IndexIVFCCD bad(ivf.get(), nullptr);
             }},
            {"IndexIVFCCD::search",
             "n < 0",
             FE,
             "n must be",
             [&] {
                 ccd.search(-1, x, k, D.data(), I.data());
             }},
            {"IndexIVFCCD::search",
             "k = 0",
             FE,
             "k must be",
             [&] {
                 ccd.search(1, x, 0, D.data(), I.data());
             }},
            {"IndexIVFCCD::search",
             "k < 0",
             FE,
             "k must be",
             [&] {
                 ccd.search(1, x, -3, D.data(), I.data());
             }},
            {"IndexIVFCCD::search",
             "null x",
             FE,
             "null",
             [&] {
                 ccd.search(1, nullptr, k, D.data(), I.data());
             }},
            {"IndexIVFCCD::search",
             "null distances",
             FE,
             "null",
             [&] {
                 ccd.search(1, x, k, nullptr, I.data());
             }},
            {"IndexIVFCCD::search",
             "null labels",
             FE,
             "null",
             [&] {
                 ccd.search(1, x, k, D.data(), nullptr);
             }},
            {"IndexIVFCCD::search",
             "params of another type",
             FE,
             "incorrect type",
             [&] {
                 faiss::SearchParameters p;
                 ccd.search(1, x, k, D.data(), I.data(), &p);
             }},
            {"IndexIVFCCD::search",
             "nprobe 0",
             FE,
             "nprobe",
             [&] {
                 faiss::SearchParametersIVF p;
                 p.nprobe = 0;
                 ccd.search(1, x, k, D.data(), I.data(), &p);
             }},
            {"IndexIVFCCD::search",
             "helpers -2",
             FE,
             "helpers",
             with_ccd_params([](auto& p) {
                 p.helpers = -2;
             })},
            {"IndexIVFCCD::search",
             "split_factor NaN",
             FE,
             "split_factor",
             with_ccd_params([](auto& p) {
                 p.split_factor = std::nan("");
             })},
            {"IndexIVFCCD::search",
             "split_factor infinite",
             FE,
             "split_factor",
             with_ccd_params([](auto& p) {
                 p.split_factor = std::numeric_limits<double>::infinity();
             })},
            {"IndexIVFCCD::search",
             "chunk_factor infinite",
             FE,
             "chunk_factor",
             with_ccd_params([](auto& p) {
                 p.chunk_factor = std::numeric_limits<double>::infinity();
             })},
            {"IndexIVFCCD::search",
             "chunk_factor < 0",
             FE,
             "chunk_factor",
             with_ccd_params([](auto& p) {
                 p.chunk_factor = -1;
             })},
            {"IndexIVF::search",
             "table_id reserved",
             FE,
             "table_id",
             with_ivf_params([](auto& p) {
                 p.table_id = 0xffffffffLL;
             })},
            {"IndexIVF::search",
             "table_id < -1",
             FE,
             "table_id",
             with_ivf_params([](auto& p) {
                 p.table_id = -2;
             })},
            {"IndexIVF::search",
             "helpers -2",
             FE,
             "helpers",
             with_ivf_params([](auto& p) {
                 p.helpers = -2;
             })},
            {"IndexIVFCCD::search",
             "list_major_min_batch < -1",
             FE,
             "list_major_min_batch",
             with_ccd_params([](auto& p) {
                 p.list_major_min_batch = -2;
             })},
            {"IndexIVFCCD::search",
             "NaN and infinity in queries",
             AS,
             "",
             nullptr,
             [&] {
                 return ivf_as_stock(odd);
             }},
            {"IndexIVFCCD::search",
             "all-NaN query",
             AS,
             "",
             nullptr,
             [&] {
                 return ivf_as_stock(std::vector<float>(kDim, kNaN));
             }},
            {"IndexIVFCCD::search",
             "huge values",
             AS,
             "",
             nullptr,
             [&] {
                 return ivf_as_stock(std::vector<float>(kDim, 3e38f));
             }},
            {"IndexIVFCCD::range_search",
             "n < 0",
             FE,
             "n must be",
             [&] {
                 ccd.range_search(-1, x, 1.0f, &rr);
             }},
            {"IndexIVFCCD::range_search",
             "null result",
             FE,
             "null",
             [&] {
                 ccd.range_search(1, x, 1.0f, nullptr);
             }},
            {"IndexIVFCCD::range_search",
             "null x",
             FE,
             "null",
             [&] {
                 ccd.range_search(1, nullptr, 1.0f, &rr);
             }},
            {"IndexIVFCCD::range_search",
             "result for other n",
             FE,
             "nq",
             [&] {
                 ccd.range_search(2, x, 1.0f, &rr);
             }},
            // ---- the parallel mode
            {"set_default_parallel_mode",
             "7",
             FE,
             "not supported",
             [] {
                 faiss::ccd::set_default_parallel_mode(7);
             }},
            {"check_parallel_mode",
             "-1",
             FE,
             "not supported",
             [] {
                 faiss::ccd::check_parallel_mode(-1);
             }},
            {"IndexIVF::search",
             "parallel_mode 99",
             FE,
             "",
             [&] {
                 auto other = make_index("IVF32,Flat", faiss::METRIC_L2);
                 other->parallel_mode = 99;
                 other->search(1, x, k, D.data(), I.data());
             }},
            // ---- HNSWTables
            {"HNSWTables()",
             "null runtime",
             FE,
             "null",
             [] {
                 faiss::ccd::HNSWTables t(nullptr);
             }},
            {"HNSWTables::add_table",
             "null index",
             FE,
             "null",
             [&] {
                 tables.add_table(7, nullptr, false);
             }},
            {"HNSWTables::add_table",
             "reserved id",
             FE,
             "reserved",
             [&] {
                 tables.add_table(0xffffffffu, hnsw.get(), false);
             }},
            {"HNSWTables::add_table",
             "ef_search 0",
             FE,
             "ef_search",
             [&] {
                 tables.add_table(8, hnsw.get(), false, 0);
             }},
            {"HNSWTables::add_table",
             "id taken",
             FE,
             "taken",
             [&] {
                 tables.add_table(3, gone.get(), false);
             }},
            {"HNSWTables::search",
             "unknown id",
             FE,
             "unknown table",
             [&] {
                 tables.search(99, 1, x, k, D.data(), I.data());
             }},
            {"HNSWTables::search",
             "removed table",
             FE,
             "unknown table",
             [&] {
                 tables.search(4, 1, x, k, D.data(), I.data());
             }},
            {"HNSWTables::search",
             "dimension differs",
             FE,
             "dimension",
             [&] {
                 tables.search(3, 1, x, kDim + 1, k, D.data(), I.data());
             }},
            {"HNSWTables::search",
             "n < 0",
             FE,
             "n must be",
             [&] {
                 tables.search(3, -1, x, k, D.data(), I.data());
             }},
            {"HNSWTables::search",
             "k = 0",
             FE,
             "k must be",
             [&] {
                 tables.search(3, 1, x, 0, D.data(), I.data());
             }},
            {"HNSWTables::search",
             "k > INT_MAX",
             FE,
             "k must be",
             [&] {
                 tables.search(3, 1, x, idx_t(1) << 40, D.data(), I.data());
             }},
            {"HNSWTables::search",
             "null x",
             FE,
             "null",
             [&] {
                 tables.search(3, 1, nullptr, k, D.data(), I.data());
             }},
            {"HNSWTables::search",
             "efSearch 0 in params",
             FE,
             "efSearch",
             [&] {
                 faiss::SearchParametersHNSW p;
                 p.efSearch = 0;
                 tables.search(3, 1, x, k, D.data(), I.data(), &p);
             }},
            {"HNSWTables::search",
             "NaN and infinity in queries",
             AS,
             "",
             nullptr,
             [&] {
                 return hnsw_as_stock(odd);
             }},
            {"HNSWTables::search_async",
             "query of another size",
             FE,
             "dimension",
             [&] {
                 tables.search_async(3, std::vector<float>(kDim - 1), k);
             }},
            {"HNSWTables::search_async",
             "unknown id",
             FE,
             "unknown table",
             [&] {
                 tables.search_async(99, std::vector<float>(kDim), k);
             }},
            {"HNSWTables::set_ef_search",
             "0",
             FE,
             "ef_search",
             [&] {
                 tables.set_ef_search(3, 0);
             }},
            {"HNSWTables::set_ef_search",
             "unknown id",
             FE,
             "unknown table",
             [&] {
                 tables.set_ef_search(99, 16);
             }},
            {"HNSWTables::remove_table",
             "unknown id",
             FE,
             "unknown table",
             [&] {
                 tables.remove_table(99);
             }},
            {"HNSWTables::remove_table",
             "removed twice",
             FE,
             "unknown table",
             [&] {
                 tables.remove_table(4);
             }},
    };

    int failed = 0;
    std::vector<std::string> entries;
    for (const Row& r : rows) {
        const std::string why = run_row(r);
        if (!why.empty()) {
            failed++;
            ADD_FAILURE() << r.entry << " (" << r.input << "): " << why;
        }
        if (std::find(entries.begin(), entries.end(), r.entry) ==
            entries.end()) {
            entries.push_back(r.entry);
        }
    }
    std::printf(
            "%zu bad-input cases over %zu C++ entry points, %d not as "
            "expected\n",
            rows.size(),
            entries.size(),
            failed);
    RecordProperty("cases", int(rows.size()));

    // After all of that, the same runtime answers as stock.
    EXPECT_TRUE(ivf_as_stock(std::vector<float>(x, x + 4 * kDim)));
    EXPECT_TRUE(hnsw_as_stock(std::vector<float>(x, x + 4 * kDim)));
    EXPECT_EQ(tables.table_ids(), std::vector<uint32_t>{3});
}

} // namespace
