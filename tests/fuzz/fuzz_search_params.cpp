/**
 * fuzz_search_params: IndexIVF's parallel_mode, the default mode, and the
 * per-call search parameters (SearchParametersIVF, SearchParametersIVFCCD,
 * IndexIVFCCD's shape fields), through real k-NN and range searches of
 * two small IVF indexes (IVF8,Flat over 320 x 8 vectors, L2 and inner
 * product) on a pool of two CCDs of one worker.
 *
 * Properties:
 *  - set_default_parallel_mode(m) throws a FaissException with a message
 *    exactly when m is not 0-3 or PARALLEL_MODE_CCD, optionally or-ed
 *    with PARALLEL_MODE_NO_HEAP_INIT (IVFSearchCCD.h); a valid m becomes
 *    default_parallel_mode() and the mode of the next IVF index made, an
 *    invalid one changes nothing.
 *  - A search with n > 0 queries throws a FaissException with a message
 *    when the index's mode is invalid; when a SearchParametersIVFCCD (or
 *    IndexIVFCCD) has a field outside its documented domain (helpers >=
 *    -1, split_factor and chunk_factor finite and >= 0, table_id in -1 ..
 *    0xfffffffe, list_major_min_batch >= -1); and for a range search that
 *    FAISS's own range loop would abort on (mode 3 or NO_HEAP_INIT outside
 *    the CCD mode). Otherwise it answers as FAISS's own search does (mode
 *    0 for calls in the CCD mode, the same stock mode for the others; the
 *    same nprobe and max_codes): both throw a FaissException (k <= 0,
 *    nprobe 0), or both return the same rows, compared sorted by (distance,
 *    label), which also covers NO_HEAP_INIT's unsorted heaps (the outputs
 *    start as empty heaps, as that mode expects); labels tied at a row's
 *    worst distance may differ. Rows are compared only when the queries
 *    and the distances are finite; labels are always in [-1, ntotal).
 *  - n = 0 (with any k, even 2^62, in the CCD mode) crashes nothing; its
 *    parameters need not be checked (there is nothing to search).
 *  - Nothing else escapes, and no sanitizer fires.
 */

#include <faiss/IVFSearchCCD.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFCCD.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissException.h>
#include <omp.h>

#include "fuzz_common.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <utility>
#include <vector>

using faiss::FaissException;
using faiss::IndexIVFFlat;
using faiss::PARALLEL_MODE_CCD;
using faiss::SearchParametersIVF;
using namespace faiss::ccd;
using idx_t = faiss::Index::idx_t;

namespace {

constexpr int kNoHeapInit = 1024; // IndexIVF::PARALLEL_MODE_NO_HEAP_INIT
constexpr int kD = 8, kNb = 320, kNlist = 8;

/// unpinned: the pool does not pin its workers (pinning is not what is
/// fuzzed, and on a loaded virtual machine it can take seconds).
PoolOptions unpinned() {
    PoolOptions o;
    o.pin_workers = false;
    return o;
}

struct Fixture {
    std::vector<float> xb;
    faiss::IndexFlatL2 quantizer_l2{kD};
    faiss::IndexFlatIP quantizer_ip{kD};
    IndexIVFFlat l2{&quantizer_l2, kD, kNlist, faiss::METRIC_L2};
    IndexIVFFlat ip{&quantizer_ip, kD, kNlist, faiss::METRIC_INNER_PRODUCT};
    std::shared_ptr<Runtime> runtime =
            Runtime::create(RuntimeOptions()
                                    .set_topology("2x1")
                                    .set_pool(unpinned())
                                    .set_monitor(false));

    Fixture() : xb(kNb * kD) {
        std::mt19937 rng(1234);
        std::uniform_real_distribution<float> u(-1, 1);
        for (float& v : xb) {
            v = u(rng);
        }
        for (IndexIVFFlat* ivf : {&l2, &ip}) {
            ivf->train(kNb, xb.data());
            ivf->add(kNb, xb.data());
        }
        Runtime::set_default(runtime); // runtime = nullptr means this one
    }
};

Fixture* fixture;

bool valid_mode(int m) {
    const int base = m & ~kNoHeapInit;
    return (base >= 0 && base <= 3) || base == PARALLEL_MODE_CCD;
}

int any_mode(FuzzedDataProvider& in) {
    static const int modes[] = {
            0,
            1,
            2,
            3,
            PARALLEL_MODE_CCD,
            PARALLEL_MODE_CCD | kNoHeapInit,
            kNoHeapInit,
            3 | kNoHeapInit,
            PARALLEL_MODE_CCD | 1,
            4,
            -1};
    return in.ConsumeBool() ? in.ConsumeIntegral<int>()
                            : in.PickValueInArray(modes);
}

/// small_or_any: half the time any value of T, else one in [lo, hi] (lo
/// when the input has run out: FuzzedDataProvider then reads zeros).
template <class T>
T small_or_any(FuzzedDataProvider& in, T lo, T hi) {
    return in.ConsumeBool() ? in.ConsumeIntegral<T>()
                            : in.ConsumeIntegralInRange<T>(lo, hi);
}

/// returns: run f(); true if it returned, false if it threw a
/// FaissException (with a message). Anything else escapes.
template <class F>
bool returns(F f) {
    try {
        f();
        return true;
    } catch (const FaissException& e) {
        FUZZ_CHECK(e.what()[0] != '\0');
        return false;
    }
}

void fuzz_default_mode(FuzzedDataProvider& in) {
    const int before = default_parallel_mode();
    const int m = any_mode(in);
    const bool ok = returns([&] {
        set_default_parallel_mode(m);
    });
    FUZZ_CHECK(ok == valid_mode(m));
    FUZZ_CHECK(returns([&] {
                   check_parallel_mode(m);
               }) == ok);
    FUZZ_CHECK(default_parallel_mode() == (ok ? m : before));
    IndexIVFFlat fresh(&fixture->quantizer_l2, kD, kNlist);
    FUZZ_CHECK(fresh.parallel_mode == default_parallel_mode());
    set_default_parallel_mode(0); // inputs stay independent
}

enum class Via { index_fields, ivf_params, ccd_params, wrapper };

/// Call: one fuzzed search. Every path gets the same nprobe and max_codes.
struct Call {
    IndexIVFFlat* ivf;
    int mode;
    Via via;
    SearchParametersIVFCCD p;
    bool range;
    idx_t n, k;
    float radius;
    std::vector<float> x;
};

Call any_call(FuzzedDataProvider& in) {
    Call c;
    c.ivf = in.ConsumeBool() ? &fixture->l2 : &fixture->ip;
    c.mode = any_mode(in);
    c.via = in.PickValueInArray(
            {Via::index_fields,
             Via::ivf_params,
             Via::ccd_params,
             Via::wrapper});
    SearchParametersIVFCCD& p = c.p;
    p.nprobe = small_or_any<size_t>(in, 1, kNlist + 1);
    p.max_codes = small_or_any<size_t>(in, 0, 2 * kNb / kNlist);
    p.split_factor = fuzz::any_double(in);
    p.chunk_factor = fuzz::any_double(in);
    p.min_chunk = small_or_any<size_t>(in, 0, 64);
    p.list_major_min_batch = small_or_any<idx_t>(in, -1, 8);
    p.helpers = small_or_any<int>(in, -1, 4);
    p.table_id = small_or_any<int64_t>(in, -1, 5);
    p.runtime = in.ConsumeBool() ? fixture->runtime.get() : nullptr;
    c.range = in.ConsumeBool();
    c.n = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<idx_t>(1, 6);
    // Any k without queries, in the CCD mode (FAISS's own modes 1 and 2
    // allocate k-sized heaps even then, and abort when that throws).
    const bool ccd = c.via == Via::ccd_params || c.via == Via::wrapper ||
            (c.mode & PARALLEL_MODE_CCD);
    c.k = c.n == 0 && ccd      ? in.ConsumeIntegral<idx_t>()
            : in.ConsumeBool() ? in.ConsumeIntegralInRange<idx_t>(-2, kNb + 10)
                               : in.ConsumeIntegralInRange<idx_t>(1, 20);
    c.radius = float(fuzz::any_double(in));
    // Queries near database vectors, perhaps with one odd component.
    c.x.resize(c.n * kD);
    for (idx_t q = 0; q < c.n; q++) {
        const int row = in.ConsumeIntegralInRange<int>(0, kNb - 1);
        for (int j = 0; j < kD; j++) {
            c.x[q * kD + j] = fixture->xb[row * kD + j] +
                    in.ConsumeIntegral<int8_t>() / 64.0f;
        }
    }
    if (c.n > 0 && in.ConsumeBool()) {
        c.x[in.ConsumeIntegralInRange<size_t>(0, c.x.size() - 1)] =
                float(fuzz::any_double(in));
    }
    return c;
}

/// Rows: per query, its (distance, label) pairs, sorted.
using Rows = std::vector<std::vector<std::pair<float, idx_t>>>;

/// search: run the call as `via` says with the index in `mode`; the rows,
/// or false when a FaissException came out.
bool search(const Call& c, int mode, Via via, Rows* rows) {
    IndexIVFFlat& ivf = *c.ivf;
    ivf.parallel_mode = mode;
    ivf.nprobe = c.p.nprobe;
    ivf.max_codes = c.p.max_codes;
    SearchParametersIVF ivf_params;
    ivf_params.nprobe = c.p.nprobe;
    ivf_params.max_codes = c.p.max_codes;
    const faiss::SearchParameters* params = via == Via::ccd_params
            ? &c.p
            : (via == Via::index_fields ? nullptr : &ivf_params);
    std::unique_ptr<IndexIVFCCD> wrapper;
    const faiss::Index* index = &ivf;
    if (via == Via::wrapper && !returns([&] {
            wrapper.reset(new IndexIVFCCD(
                    &ivf,
                    fixture->runtime,
                    uint32_t(c.p.table_id)));
        })) {
        return false;
    }
    if (wrapper) {
        wrapper->split_factor = c.p.split_factor;
        wrapper->chunk_factor = c.p.chunk_factor;
        wrapper->min_chunk = c.p.min_chunk;
        wrapper->list_major_min_batch = c.p.list_major_min_batch;
        wrapper->helpers = c.p.helpers;
        index = wrapper.get();
    }
    rows->assign(c.n, {});
    // An empty slot of FAISS's heaps: (the metric's worst value, -1).
    const float empty =
            ivf.metric_type == faiss::METRIC_L2 ? FLT_MAX : -FLT_MAX;
    if (c.range) {
        faiss::RangeSearchResult res(c.n);
        if (!returns([&] {
                index->range_search(c.n, c.x.data(), c.radius, &res, params);
            })) {
            return false;
        }
        for (idx_t q = 0; q < c.n; q++) {
            for (size_t i = res.lims[q]; i < res.lims[q + 1]; i++) {
                (*rows)[q].emplace_back(res.distances[i], res.labels[i]);
            }
        }
    } else {
        // Empty heaps, which NO_HEAP_INIT expects the caller to provide.
        const size_t nk = c.n > 0 && c.k > 0 ? size_t(c.n * c.k) : 1;
        std::vector<float> dis(nk, empty);
        std::vector<idx_t> labels(nk, -1);
        if (!returns([&] {
                index->search(
                        c.n,
                        c.x.data(),
                        c.k,
                        dis.data(),
                        labels.data(),
                        params);
            })) {
            return false;
        }
        for (idx_t q = 0; q < c.n; q++) {
            for (idx_t j = 0; j < c.k; j++) {
                (*rows)[q].emplace_back(dis[q * c.k + j], labels[q * c.k + j]);
            }
        }
    }
    for (auto& row : *rows) {
        std::sort(row.begin(), row.end());
        for (const auto& hit : row) {
            FUZZ_CHECK(hit.second >= -1 && hit.second < kNb);
        }
    }
    return true;
}

bool finite(const std::vector<float>& x) {
    return std::all_of(x.begin(), x.end(), [](float v) {
        return std::isfinite(v);
    });
}

bool finite(const Rows& rows) {
    for (const auto& row : rows) {
        for (const auto& hit : row) {
            if (hit.second >= 0 && !std::isfinite(hit.first)) {
                return false;
            }
        }
    }
    return true;
}

/// same_rows: the same distances, and the same labels except among those
/// tied at a k-NN row's worst distance, where the cut is arbitrary.
bool same_rows(const Rows& a, const Rows& b, bool knn, bool l2) {
    for (size_t q = 0; q < a.size(); q++) {
        const auto &x = a[q], &y = b[q];
        if (x.size() != y.size()) {
            return false;
        }
        for (size_t i = 0; i < x.size(); i++) {
            const float worst = l2 ? x.back().first : x.front().first;
            if (x[i].first != y[i].first ||
                (x[i].second != y[i].second && !(knn && x[i].first == worst))) {
                return false;
            }
        }
    }
    return a.size() == b.size();
}

void fuzz_search(FuzzedDataProvider& in) {
    const Call c = any_call(in);
    const bool ccd_params = c.via == Via::ccd_params || c.via == Via::wrapper;
    const bool ccd = ccd_params || (c.mode & PARALLEL_MODE_CCD);
    Rows got, want;
    const bool ok = search(c, c.mode, c.via, &got);
    if (c.n == 0) {
        return;
    }
    const SearchParametersIVFCCD& p = c.p;
    const bool table_ok = c.via == Via::wrapper
            ? uint32_t(p.table_id) != UINT32_MAX
            : !ccd_params || (p.table_id >= -1 && p.table_id < 0xffffffff);
    const bool shape_ok = !ccd_params ||
            (p.helpers >= -1 && p.split_factor >= 0 && p.chunk_factor >= 0 &&
             std::isfinite(p.split_factor) && std::isfinite(p.chunk_factor) &&
             p.list_major_min_batch >= -1);
    const int stock = c.mode & ~PARALLEL_MODE_CCD;
    const bool range_ok =
            !c.range || ccd || stock == 0 || stock == 1 || stock == 2;
    if (!valid_mode(c.mode) || !table_ok || !shape_ok || !range_ok) {
        FUZZ_CHECK(!ok);
        return;
    }
    // FAISS 1.7.3's search_preassigned reads nprobe as a signed idx_t and
    // refuses one of 2^63 or more, which the CCD mode caps at nlist.
    if (ccd && c.p.nprobe > size_t(INT64_MAX)) {
        return;
    }
    const bool want_ok = search(c, ccd ? 0 : c.mode, Via::ivf_params, &want);
    FUZZ_CHECK(ok == want_ok);
    if (ok && finite(c.x) && finite(want)) {
        FUZZ_CHECK(same_rows(
                got,
                want,
                !c.range,
                c.ivf->metric_type == faiss::METRIC_L2));
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // FAISS's own loops in one thread: OpenMP's spinning threads would
    // contend with the pool's workers for the cores (6x fewer runs).
    omp_set_num_threads(1);
    unsetenv("FAISS_CCD_PARALLEL_MODE");
    fixture = new Fixture();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    fuzz_default_mode(in);
    fuzz_search(in);
    return 0;
}
