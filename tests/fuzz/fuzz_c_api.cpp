/**
 * fuzz_c_api: faiss-ccd's C API (the headers in c_api/) driven by a short
 * sequence of calls decoded from the input, with fuzzed arguments: NULL
 * pointers, negative and huge counts, reserved and unknown ids, bad topology
 * specs, policy names and parallel modes, NaN and huge query components.
 * Handles are NULL or live ones (two slots per kind), never wild pointers,
 * which no C API can check; buffers always hold what the counts say.
 *
 * Fixtures, made once with FAISS's own C API: an IVF8,Flat index of 320 x
 * 8 vectors (nprobe 3), the same untrained, a Flat and an HNSW8 index.
 * Pools are small and unpinned ("4000,4001" or "4000;4001": CPUs the
 * machine lacks; "auto" is FAISS_CCD_TOPOLOGY=4000,4001); a fuzzed spec
 * reaches faiss_ccd_Pool_new only when it is invalid or gives at most 4
 * unpinned workers (pinning can take seconds on a loaded virtual machine;
 * fuzz_topology_spec covers the parser).
 *
 * Properties, for every call:
 *  - It returns FAISS_CCD_OK, or one of the codes error_c.h documents for
 *    the conditions that hold (NULL_ARGUMENT for a NULL pointer,
 *    INVALID_ARGUMENT for a value outside its domain, NOT_FOUND for an
 *    unknown table id, FAISS_EXCEPTION for a parallel mode IndexIVF does
 *    not support); when several hold, any of theirs. OK only when none
 *    holds.
 *  - A failure leaves a last error that starts with the function's name;
 *    a success leaves the last error as it was. A call that makes a handle
 *    leaves *out NULL when it fails.
 *  - What succeeds is right: counts and shapes as created, table sets as
 *    added and removed, describe() as snprintf writes, the default parallel
 *    mode as last set; a search answers as faiss_Index_search does on the
 *    same index (same distances, the same labels except among those tied
 *    at the worst distance), when the queries and distances are finite.
 *  - Nothing crashes, nothing leaks (every handle is freed at the end of
 *    the input; LeakSanitizer), no sanitizer fires.
 */

#include <faiss/c_api/IndexIVF_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/impl/AuxIndexStructures_c.h>
#include <faiss/c_api/index_factory_c.h>
#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/Topology.h>
#include <omp.h>

#include <c_api/HNSWTables_c.h>
#include <c_api/IndexIVFCCD_c.h>
#include <c_api/Pool_c.h>
#include <c_api/error_c.h>

#include "fuzz_common.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <initializer_list>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

/// last_error: the thread's last error (FAISS's channel), "" while none.
const char* last_error() {
    const char* msg = faiss_get_last_error();
    return msg != nullptr ? msg : "";
}

constexpr int kD = 8, kNb = 320;
constexpr const char* kAutoSpec = "4000,4001";

struct Fixture {
    std::vector<float> xb = std::vector<float>(kNb * kD);
    FaissIndex* ivf = nullptr;       ///< IVF8,Flat, trained, nprobe 3
    FaissIndex* untrained = nullptr; ///< IVF8,Flat
    FaissIndex* flat = nullptr;
    FaissIndex* hnsw = nullptr; ///< HNSW8

    FaissIndex* make(const char* description, bool fill) {
        FaissIndex* index = nullptr;
        FUZZ_CHECK(
                faiss_index_factory(&index, kD, description, METRIC_L2) == 0);
        if (fill) {
            FUZZ_CHECK(faiss_Index_train(index, kNb, xb.data()) == 0);
            FUZZ_CHECK(faiss_Index_add(index, kNb, xb.data()) == 0);
        }
        return index;
    }
    Fixture() {
        std::mt19937 rng(4321);
        std::uniform_real_distribution<float> u(-1, 1);
        for (float& v : xb) {
            v = u(rng);
        }
        ivf = make("IVF8,Flat", true);
        faiss_IndexIVF_set_nprobe(faiss_IndexIVF_cast(ivf), 3);
        untrained = make("IVF8,Flat", false);
        flat = make("Flat", true);
        hnsw = make("HNSW8", true);
    }
};

Fixture* fixture;

/// Shape: what a pool was made with.
struct Shape {
    int workers = 0, ccds = 0;
};

/// State: one input's handles, and what they should answer.
struct State {
    FaissCcdPool* pools[2] = {};
    Shape shapes[2];
    Shape default_shape; ///< of the default pool
    FaissCcdIndexIVFCCD* ivfs[2] = {};
    bool ivf_trained[2] = {};
    FaissCcdHNSWTables* tables[2] = {};
    std::set<uint32_t> table_ids[2];
    int default_mode = 0;
    int index_mode = 0; ///< the IVF fixture's parallel_mode
};

/// call: run a C function; check its code against the errors whose
/// condition holds (FAISS_CCD_OK alone when none does) and its last error.
template <class F>
int call(
        const char* func,
        F f,
        std::initializer_list<std::pair<bool, int>> errors) {
    const std::string before = last_error();
    const int rc = f();
    bool allowed = false, any = false;
    for (const auto& [cond, code] : errors) {
        any = any || cond;
        allowed = allowed || (cond && rc == code);
    }
    if (!any) {
        allowed = rc == FAISS_CCD_OK ||
                (rc > 0 && std::string(func) == "faiss_ccd_Pool_describe");
    }
    if (!allowed) {
        std::fprintf(
                stderr,
                "%s returned %d (%s): %s\n",
                func,
                rc,
                faiss_ccd_error_name(rc),
                last_error());
        FUZZ_CHECK(allowed);
    }
    const std::string after = last_error();
    if (rc < 0) {
        FUZZ_CHECK(after.rfind(std::string(func) + ": ", 0) == 0);
    } else {
        FUZZ_CHECK(after == before);
    }
    return rc;
}

/// CALL(fn, (args...), {cond, code}...): call() naming fn.
// clang-format off
#define CALL(fn, args, ...) call(#fn, [&] { return fn args; }, {__VA_ARGS__})
// clang-format on

/// poison: what an out-handle holds before a call that makes one: not
/// NULL, so that a failing call visibly resets it (never dereferenced).
template <class T>
T* poison(State& s) {
    return reinterpret_cast<T*>(&s);
}

/// made: the out-handle after such a call: the new handle when it
/// succeeded, which must then be one, and NULL otherwise.
template <class T>
T* made(State& s, int rc, T* handle) {
    FUZZ_CHECK(rc == 0 ? handle && handle != poison<T>(s) : !handle);
    return handle;
}

constexpr int kNull = FAISS_CCD_ERROR_NULL_ARGUMENT;
constexpr int kInvalid = FAISS_CCD_ERROR_INVALID_ARGUMENT;
constexpr int kNotFound = FAISS_CCD_ERROR_NOT_FOUND;
constexpr int kFaiss = FAISS_CCD_ERROR_FAISS_EXCEPTION;

// Decoding: an input that runs out of bytes reads zeros, which decode to
// valid arguments, so that short inputs reach the calls' main paths.

/// maybe_null: p, or NULL one time in eight.
template <class T>
T* maybe_null(FuzzedDataProvider& in, T* p) {
    return in.ConsumeIntegralInRange<int>(0, 7) == 7 ? nullptr : p;
}

bool valid_mode(int m) {
    const int base = m & ~1024; // PARALLEL_MODE_NO_HEAP_INIT
    return (base >= 0 && base <= 3) || base == FAISS_PARALLEL_MODE_CCD;
}

int any_mode(FuzzedDataProvider& in) {
    return in.ConsumeBool()
            ? in.ConsumeIntegral<int>()
            : in.PickValueInArray({0, 1, 3, FAISS_PARALLEL_MODE_CCD, 1024, 7});
}

uint32_t any_id(FuzzedDataProvider& in) {
    return in.ConsumeBool() ? in.PickValueInArray({UINT32_MAX, 7u, 1u << 31})
                            : in.ConsumeIntegralInRange<uint32_t>(0, 3);
}

/// Queries: n rows near database vectors, perhaps with one odd component.
std::vector<float> queries(FuzzedDataProvider& in, int64_t n) {
    std::vector<float> x(std::max<int64_t>(n, 1) * kD);
    for (int64_t q = 0; q < n; q++) {
        const int row = in.ConsumeIntegralInRange<int>(0, kNb - 1);
        for (int j = 0; j < kD; j++) {
            x[q * kD + j] = fixture->xb[row * kD + j] +
                    in.ConsumeIntegral<int8_t>() / 64.0f;
        }
    }
    if (in.ConsumeBool()) {
        x[in.ConsumeIntegralInRange<size_t>(0, x.size() - 1)] =
                float(fuzz::any_double(in));
    }
    return x;
}

/// Answer: a k-NN search's outputs, made as FAISS's empty heaps.
struct Answer {
    std::vector<float> dis;
    std::vector<int64_t> labels;
    Answer(int64_t n, int64_t k)
            : dis(n > 0 && k > 0 ? n * k : 1, FLT_MAX),
              labels(dis.size(), -1) {}
};

/// same_answers: sorted per row by (distance, label), equal distances,
/// equal labels but for those tied at a row's worst distance.
bool same_answers(const Answer& a, const Answer& b, int64_t n, int64_t k) {
    for (int64_t q = 0; q < n; q++) {
        std::vector<std::pair<float, int64_t>> x, y;
        for (int64_t j = q * k; j < (q + 1) * k; j++) {
            x.emplace_back(a.dis[j], a.labels[j]);
            y.emplace_back(b.dis[j], b.labels[j]);
        }
        std::sort(x.begin(), x.end());
        std::sort(y.begin(), y.end());
        for (int64_t j = 0; j < k; j++) {
            if (x[j].first != y[j].first ||
                (x[j].second != y[j].second && x[j].first != x.back().first)) {
                return false;
            }
        }
    }
    return true;
}

bool finite(const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float f) {
        return std::isfinite(f);
    });
}

/// finite: every distance of a found neighbour is finite.
bool finite(const Answer& a) {
    for (size_t j = 0; j < a.dis.size(); j++) {
        if (a.labels[j] >= 0 && !std::isfinite(a.dis[j])) {
            return false;
        }
    }
    return true;
}

void check_labels(const Answer& a) {
    for (int64_t l : a.labels) {
        FUZZ_CHECK(l >= -1 && l < kNb);
    }
}

/// search_counts: n in 1..5 and k in 1..12, or anything up to 0 (1 and
/// 1 when the input runs out), which buffers of 5 x 12 can honour; any k
/// when n is 0.
std::pair<int64_t, int64_t> search_counts(FuzzedDataProvider& in) {
    auto count = [&](int64_t max) {
        return in.ConsumeBool()
                ? in.ConsumeIntegralInRange<int64_t>(INT64_MIN, 0)
                : 1 + in.ConsumeIntegralInRange<int64_t>(0, max - 1);
    };
    const int64_t n = count(5);
    const int64_t k = n == 0 && in.ConsumeBool() ? in.ConsumeIntegral<int64_t>()
                                                 : count(12);
    return {n, k};
}

void op_pool_new(FuzzedDataProvider& in, State& s) {
    const int slot = in.ConsumeBool();
    faiss_ccd_Pool_free(s.pools[slot]);
    s.pools[slot] = nullptr;
    std::string topo_s = in.PickValueInArray(
            {"4000,4001", "4000;4001", "auto", "", "1x0", "0-1;1"});
    if (in.ConsumeBool()) {
        topo_s = fuzz::c_string(in, 16);
    }
    std::string policy_s =
            in.PickValueInArray({"ccd", "flat", "rr", "RR", "x"});
    if (in.ConsumeBool()) {
        policy_s = fuzz::c_string(in, 16);
    }
    const char* topo = in.ConsumeBool() ? topo_s.c_str() : nullptr;
    const char* policy = in.ConsumeBool() ? policy_s.c_str() : nullptr;
    Shape shape;
    bool topo_ok = true, policy_ok = true;
    try {
        const auto t = faiss::ccd::Topology::from_string(topo ? topo : "auto");
        bool pinned = false;
        for (int w = 0; w < t.num_workers(); w++) {
            pinned = pinned || t.cpu_of(w) >= 0;
        }
        if (pinned || t.num_workers() > 4) {
            return; // not made here
        }
        shape = {t.num_workers(), t.num_ccds()};
    } catch (const std::invalid_argument&) {
        topo_ok = false;
    }
    try {
        faiss::ccd::policy_from_name(policy ? policy : "ccd");
    } catch (const std::invalid_argument&) {
        policy_ok = false;
    }
    FaissCcdPool* pool = poison<FaissCcdPool>(s);
    FaissCcdPool** out = maybe_null(in, &pool);
    const int rc =
            CALL(faiss_ccd_Pool_new,
                 (out, topo, policy),
                 {!out, kNull},
                 {!topo_ok || !policy_ok, kInvalid});
    if (out) {
        s.pools[slot] = made(s, rc, pool);
        s.shapes[slot] = shape;
    }
}

void op_pool_query(FuzzedDataProvider& in, State& s) {
    const int slot = in.ConsumeBool();
    const FaissCcdPool* pool = s.pools[slot];
    const Shape shape = s.shapes[slot];
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
        case 0: {
            int v = -1;
            int* out = maybe_null(in, &v);
            if (CALL(faiss_ccd_Pool_num_workers,
                     (pool, out),
                     {!pool || !out, kNull}) == 0) {
                FUZZ_CHECK(v == shape.workers);
            }
            CALL(faiss_ccd_Pool_num_ccds, (pool, out), {!pool || !out, kNull});
            FUZZ_CHECK(!pool || !out || v == shape.ccds);
            break;
        }
        case 1: {
            const size_t size = in.PickValueInArray({0, 1, 8, 400});
            std::string buf(400, '#'), whole(400, '#');
            char* p = size == 0 && in.ConsumeBool() ? nullptr : &buf[0];
            const int rc =
                    CALL(faiss_ccd_Pool_describe,
                         (pool, p, size),
                         {!pool || (!p && size > 0), kNull});
            if (rc >= 0 && p && size > 0) {
                FUZZ_CHECK(faiss_ccd_Pool_describe(pool, &whole[0], 400) == rc);
                FUZZ_CHECK(rc < 400);
                FUZZ_CHECK(
                        buf.c_str() ==
                        whole.substr(0, std::min<size_t>(rc, size - 1)));
            }
            break;
        }
        case 2: {
            FaissCcdPoolStats st;
            FaissCcdPoolStats* out = maybe_null(in, &st);
            if (CALL(faiss_ccd_Pool_stats,
                     (pool, out),
                     {!pool || !out, kNull}) == 0) {
                FUZZ_CHECK(st.num_workers == shape.workers);
                FUZZ_CHECK(st.cross_ccd_steal_ratio >= 0);
                FUZZ_CHECK(st.cross_ccd_steal_ratio <= 1);
            }
            break;
        }
        case 3: {
            const int w = in.ConsumeBool() ? in.ConsumeIntegralInRange(-1, 4)
                                           : in.ConsumeIntegral<int>();
            FaissCcdWorkerStats st;
            FaissCcdWorkerStats* out = maybe_null(in, &st);
            if (CALL(faiss_ccd_Pool_worker_stats,
                     (pool, w, out),
                     {!pool || !out, kNull},
                     {pool && (w < 0 || w >= shape.workers), kInvalid}) == 0) {
                FUZZ_CHECK(st.worker == w);
                FUZZ_CHECK(st.ccd >= 0 && st.ccd < shape.ccds);
            }
            break;
        }
        default:
            CALL(faiss_ccd_Pool_wait_idle, (pool), {!pool, kNull});
    }
}

void op_default_pool(FuzzedDataProvider& in, State& s) {
    const int slot = in.ConsumeBool();
    if (in.ConsumeBool()) {
        const FaissCcdPool* pool = in.ConsumeBool() ? s.pools[slot] : nullptr;
        CALL(faiss_ccd_set_default_pool, (pool), );
        s.default_shape = pool ? s.shapes[slot] : Shape{2, 1};
        return;
    }
    faiss_ccd_Pool_free(s.pools[slot]);
    s.pools[slot] = nullptr;
    FaissCcdPool* pool = poison<FaissCcdPool>(s);
    FaissCcdPool** out = maybe_null(in, &pool);
    const int rc = CALL(faiss_ccd_get_default_pool, (out), {!out, kNull});
    if (out) {
        s.pools[slot] = made(s, rc, pool);
        s.shapes[slot] = s.default_shape;
    }
}

void op_ivfccd_new(FuzzedDataProvider& in, State& s) {
    const int slot = in.ConsumeBool();
    faiss_ccd_IndexIVFCCD_free(s.ivfs[slot]);
    s.ivfs[slot] = nullptr;
    const Fixture& f = *fixture;
    FaissIndex* index = in.PickValueInArray(
            {f.ivf, f.untrained, f.flat, f.hnsw, (FaissIndex*)nullptr});
    FaissCcdPool* pool = s.pools[in.ConsumeBool()];
    const uint32_t id = any_id(in);
    FaissCcdIndexIVFCCD* handle = poison<FaissCcdIndexIVFCCD>(s);
    FaissCcdIndexIVFCCD** out = maybe_null(in, &handle);
    const bool is_ivf = index == f.ivf || index == f.untrained;
    const int rc =
            CALL(faiss_ccd_IndexIVFCCD_new,
                 (out, index, pool, id),
                 {!out || !index || !pool, kNull},
                 {(index && !is_ivf) || id == UINT32_MAX, kInvalid});
    if (out) {
        s.ivfs[slot] = made(s, rc, handle);
        s.ivf_trained[slot] = index == f.ivf;
    }
}

void op_ivfccd_search(FuzzedDataProvider& in, State& s) {
    const int slot = in.ConsumeBool();
    const FaissCcdIndexIVFCCD* h = s.ivfs[slot];
    const bool bad_mode = !valid_mode(s.index_mode) && s.ivf_trained[slot];
    const auto counts = search_counts(in);
    const int64_t n = counts.first, k = counts.second;
    const std::vector<float> xv = queries(in, std::max<int64_t>(n, 0));
    const float* x = maybe_null(in, xv.data());
    if (in.ConsumeBool()) { // range search
        const float radius = float(fuzz::any_double(in));
        const int64_t nq = std::max<int64_t>(n, 0) + in.ConsumeBool();
        FaissRangeSearchResult* res = nullptr;
        FUZZ_CHECK(faiss_RangeSearchResult_new(&res, nq) == 0);
        FaissRangeSearchResult* r = maybe_null(in, res);
        const int rc = CALL(
                faiss_ccd_IndexIVFCCD_range_search,
                (h, n, x, radius, r),
                {!h || !x || !r, kNull},
                {n < 0 || nq != n || (h && !s.ivf_trained[slot]), kInvalid},
                {bad_mode, kFaiss});
        if (rc == 0) {
            size_t* lims = nullptr;
            faiss_RangeSearchResult_lims(res, &lims);
            int64_t* labels = nullptr;
            float* dis = nullptr;
            faiss_RangeSearchResult_labels(res, &labels, &dis);
            for (int64_t q = 0; q < n; q++) {
                FUZZ_CHECK(lims[q] <= lims[q + 1]);
            }
            for (size_t i = 0; i < lims[n]; i++) {
                FUZZ_CHECK(labels[i] >= 0 && labels[i] < kNb);
            }
        }
        faiss_RangeSearchResult_free(res);
        return;
    }
    Answer got(n, k), want(n, k);
    float* dis = maybe_null(in, got.dis.data());
    int64_t* labels = maybe_null(in, got.labels.data());
    const int rc =
            CALL(faiss_ccd_IndexIVFCCD_search,
                 (h, n, x, k, dis, labels),
                 {!h || !x || !dis || !labels, kNull},
                 {n < 0 || k <= 0 || (h && !s.ivf_trained[slot]), kInvalid},
                 {bad_mode && n > 0, kFaiss});
    if (rc == 0 && n > 0) {
        check_labels(got);
        FUZZ_CHECK(
                faiss_Index_search(
                        fixture->ivf,
                        n,
                        x,
                        k,
                        want.dis.data(),
                        want.labels.data()) == 0);
        if (finite(xv) && finite(want)) {
            FUZZ_CHECK(same_answers(got, want, n, k));
        }
    }
}

void op_modes(FuzzedDataProvider& in, State& s) {
    const int mode = any_mode(in);
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
        case 0:
            if (CALL(faiss_ccd_set_default_parallel_mode,
                     (mode),
                     {!valid_mode(mode), kFaiss}) == 0) {
                s.default_mode = mode;
            }
            break;
        case 1: {
            int v = INT_MIN;
            int* out = maybe_null(in, &v);
            if (CALL(faiss_ccd_get_default_parallel_mode,
                     (out),
                     {!out, kNull}) == 0) {
                FUZZ_CHECK(v == s.default_mode);
            }
            break;
        }
        default: // FAISS's own setter, on the fixture the handles search
            faiss_IndexIVF_set_parallel_mode(
                    faiss_IndexIVF_cast(fixture->ivf),
                    mode);
            s.index_mode = mode;
    }
}

void op_tables(FuzzedDataProvider& in, State& s) {
    const int slot = in.ConsumeBool();
    FaissCcdHNSWTables* t = s.tables[slot];
    std::set<uint32_t>& ids = s.table_ids[slot];
    const uint32_t id = any_id(in);
    const bool known = t && ids.count(id);
    switch (in.ConsumeIntegralInRange<int>(0, 6)) {
        case 0: {
            faiss_ccd_HNSWTables_free(t);
            s.tables[slot] = nullptr;
            ids.clear();
            FaissCcdPool* pool = s.pools[in.ConsumeBool()];
            FaissCcdHNSWTables* handle = poison<FaissCcdHNSWTables>(s);
            FaissCcdHNSWTables** out = maybe_null(in, &handle);
            const int rc =
                    CALL(faiss_ccd_HNSWTables_new,
                         (out, pool),
                         {!out || !pool, kNull});
            if (out) {
                s.tables[slot] = made(s, rc, handle);
            }
            break;
        }
        case 1: {
            const Fixture& f = *fixture;
            FaissIndex* index = in.PickValueInArray(
                    {f.hnsw, f.hnsw, f.ivf, f.flat, (FaissIndex*)nullptr});
            if (CALL(faiss_ccd_HNSWTables_add_table,
                     (t, id, index),
                     {!t || !index, kNull},
                     {(index && index != f.hnsw) || id == UINT32_MAX || known,
                      kInvalid}) == 0) {
                ids.insert(id);
            }
            break;
        }
        case 2:
            if (CALL(faiss_ccd_HNSWTables_remove_table,
                     (t, id),
                     {!t, kNull},
                     {t && !known, kNotFound}) == 0) {
                ids.erase(id);
            }
            break;
        case 3: {
            int has = -1;
            int* out = maybe_null(in, &has);
            CALL(faiss_ccd_HNSWTables_has_table,
                 (t, id, out),
                 {!t || !out, kNull});
            FUZZ_CHECK(!t || !out || has == int(known));
            size_t num = SIZE_MAX;
            size_t* nout = maybe_null(in, &num);
            CALL(faiss_ccd_HNSWTables_num_tables,
                 (t, nout),
                 {!t || !nout, kNull});
            FUZZ_CHECK(!t || !nout || num == ids.size());
            break;
        }
        case 4: {
            const int hand_off = in.ConsumeBool()
                    ? in.ConsumeIntegralInRange<int>(-3, 3)
                    : in.ConsumeIntegral<int>();
            CALL(faiss_ccd_HNSWTables_set_hand_off,
                 (t, hand_off),
                 {!t, kNull},
                 {hand_off < -1 || hand_off > 1, kInvalid});
            break;
        }
        case 5: {
            const auto counts = search_counts(in);
            const int64_t n = counts.first, k = counts.second;
            const std::vector<float> xv = queries(in, std::max<int64_t>(n, 0));
            const float* x = maybe_null(in, xv.data());
            Answer got(n, k), want(n, k);
            float* dis = maybe_null(in, got.dis.data());
            int64_t* labels = maybe_null(in, got.labels.data());
            // k above INT_MAX: out of the domain, reported by HNSWTables
            // itself (a FaissException) rather than by the C check.
            const int rc =
                    CALL(faiss_ccd_HNSWTables_search,
                         (t, id, n, x, k, dis, labels),
                         {!t || !x || !dis || !labels, kNull},
                         {n < 0 || k <= 0 || k > INT_MAX, kInvalid},
                         {k > INT_MAX, kFaiss},
                         {t && !known, kNotFound});
            if (rc == 0 && n > 0) {
                check_labels(got);
                FUZZ_CHECK(
                        faiss_Index_search(
                                fixture->hnsw,
                                n,
                                x,
                                k,
                                want.dis.data(),
                                want.labels.data()) == 0);
                if (finite(xv) && finite(want)) {
                    FUZZ_CHECK(same_answers(got, want, n, k));
                }
            }
            break;
        }
        default: {
            const int code = in.ConsumeIntegral<int>();
            const std::string name = faiss_ccd_error_name(code);
            FUZZ_CHECK(!name.empty());
            FUZZ_CHECK(
                    (code <= 0 && code >= -7) ==
                    (name.rfind("FAISS_CCD_", 0) == 0));
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // FAISS's own searches (the reference) in one thread: OpenMP's
    // spinning threads would contend with the pools' workers.
    omp_set_num_threads(1);
    setenv("FAISS_CCD_TOPOLOGY", kAutoSpec, 1);
    unsetenv("FAISS_CCD_PARALLEL_MODE");
    fixture = new Fixture();
    return 0;
}

/// start: what every input starts from, so that short inputs reach the
/// searches: slot 0 holds a pool of two CCDs, an IVF handle on the trained
/// fixture (table 1) and HNSW tables holding table 0.
void start(State& s) {
    s.default_shape = {2, 1}; // kAutoSpec
    FUZZ_CHECK(faiss_ccd_Pool_new(&s.pools[0], "4000;4001", "ccd") == 0);
    s.shapes[0] = {2, 2};
    FUZZ_CHECK(
            faiss_ccd_IndexIVFCCD_new(
                    &s.ivfs[0],
                    fixture->ivf,
                    s.pools[0],
                    1) == 0);
    s.ivf_trained[0] = true;
    FUZZ_CHECK(faiss_ccd_HNSWTables_new(&s.tables[0], s.pools[0]) == 0);
    FUZZ_CHECK(
            faiss_ccd_HNSWTables_add_table(s.tables[0], 0, fixture->hnsw) == 0);
    s.table_ids[0] = {0};
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    State s;
    start(s);
    for (int i = 0; i < 24 && in.remaining_bytes() > 0; i++) {
        switch (in.ConsumeIntegralInRange<int>(0, 6)) {
            case 0:
                op_pool_new(in, s);
                break;
            case 1:
                op_pool_query(in, s);
                break;
            case 2:
                op_default_pool(in, s);
                break;
            case 3:
                op_ivfccd_new(in, s);
                break;
            case 4:
                op_ivfccd_search(in, s);
                break;
            case 5:
                op_modes(in, s);
                break;
            default:
                op_tables(in, s);
        }
    }
    // Free everything, in an order that lets handles outlive their pools.
    for (int i = 0; i < 2; i++) {
        faiss_ccd_Pool_free(s.pools[i]);
        faiss_ccd_IndexIVFCCD_free(s.ivfs[i]);
        faiss_ccd_HNSWTables_free(s.tables[i]);
    }
    FUZZ_CHECK(faiss_ccd_set_default_pool(nullptr) == 0);
    FUZZ_CHECK(faiss_ccd_set_default_parallel_mode(0) == 0);
    faiss_IndexIVF_set_parallel_mode(faiss_IndexIVF_cast(fixture->ivf), 0);
    return 0;
}
