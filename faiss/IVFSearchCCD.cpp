#include <faiss/IVFSearchCCD.h>

#include <faiss/BatchShape.h>
#include <faiss/ForkSafety.h>
#include <faiss/IVFScanCost.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexScalarQuantizer.h>
#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/HeldAcrossForks.h>
#include <faiss/ccd_scheduler/HelperPlan.h>
#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/ccd_scheduler/WorkShare.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/Heap.h>
#include <faiss/utils/distances.h>
#include <faiss/utils/utils.h>

#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace faiss {
namespace ccd {

namespace {

using idx_t = Index::idx_t;

// ------------------------------------------------------------ defaults

/// kUnset: default_mode_ before anything (the environment) set it.
constexpr int kUnset = -1;
std::atomic<int> default_mode_{kUnset};

int mode_from_env() {
    const char* env = std::getenv("FAISS_CCD_PARALLEL_MODE");
    if (env == nullptr || *env == '\0') {
        return 0;
    }
    if (std::strcmp(env, "ccd") == 0 || std::strcmp(env, "CCD") == 0) {
        return PARALLEL_MODE_CCD;
    }
    char* end = nullptr;
    const long mode = std::strtol(env, &end, 10);
    FAISS_THROW_IF_NOT_FMT(
            *end == '\0' && mode >= 0 && mode <= INT32_MAX,
            "FAISS_CCD_PARALLEL_MODE: expected \"ccd\" or a parallel_mode "
            "number, got \"%s\"",
            env);
    check_parallel_mode(int(mode));
    return int(mode);
}

/// A fork() child searches too (ForkSafety.h), from the moment the IVF
/// search is loaded.
[[maybe_unused]] const bool fork_safe = (make_searches_fork_safe(), true);

/// stats_mutex: IndexIVFStats are plain fields (and indexIVF_stats is a
/// global): concurrent searches add to them under this. fork() takes it
/// first, so that a child never finds it held by a parent's search.
std::mutex& stats_mutex() {
    static std::mutex* m = [] {
        auto* made = new std::mutex();
        hold_across_forks(*made);
        return made;
    }();
    return *m;
}

// ------------------------------------------------------------ one call

// The automatic choice of list-major (list_major_min_batch = -1) is
// priced (BatchShape.h), from 64 queries: below that a list's queries are
// too few to pay list-major's per-item set_query back.
constexpr idx_t kAutoListMajorMinBatch = 64;

/// QueryLock: guards one query's heap while a task merges into it (k
/// elements). Tasks of one query rarely finish at the same instant, so the
/// lock is almost always free: two uncontended atomic operations, the same
/// as a spin lock, without its worst case.
using QueryLock = std::mutex;

/// ScanItem: codes [begin, end) of list `list_no`, scanned for query q,
/// whose probe of rank p it is.
struct ScanItem {
    idx_t q;
    idx_t list_no;
    size_t p;
    size_t begin;
    size_t end;
};

/// nprobe_of: the probes of a call, as IndexIVF::search counts them.
size_t nprobe_of(const IndexIVF& ivf, const SearchParametersIVF* params) {
    const size_t nprobe =
            std::min(ivf.nlist, params ? params->nprobe : ivf.nprobe);
    FAISS_THROW_IF_NOT_MSG(nprobe > 0, "IVF search: nprobe must be > 0");
    return nprobe;
}

/// servable: whether scans as tasks answer this call exactly: not with
/// max_codes (which k-NN search counts, and range search ignores) and a
/// sorted IDSelectorRange together (FAISS then counts max_codes over the
/// range's part of each list only, which the scanners do not see), nor
/// without an InvertedListScanner (the FastScan family has none; some
/// indexes throw).
bool servable(
        const IndexIVF& ivf,
        const SearchParametersIVF* params,
        bool store_pairs,
        bool counts_codes = true) {
    const IDSelector* sel = params ? params->sel : nullptr;
    const idx_t max_codes = params ? params->max_codes : ivf.max_codes;
    auto selr = dynamic_cast<const IDSelectorRange*>(sel);
    if (counts_codes && max_codes != 0 && selr && selr->assume_sorted) {
        return false;
    }
    try {
        std::unique_ptr<InvertedListScanner> probe(
                ivf.get_InvertedListScanner(store_pairs, sel));
        return probe != nullptr;
    } catch (const FaissException&) {
        return false;
    }
}

/// call_runtime: where a call's scans run: its SearchParametersIVFCCD's
/// runtime, else the default one, which `held` then keeps alive.
Runtime& call_runtime(
        const SearchParametersIVF* params,
        std::shared_ptr<Runtime>& held) {
    auto ccd = dynamic_cast<const SearchParametersIVFCCD*>(params);
    if (ccd != nullptr && ccd->runtime != nullptr) {
        return *ccd->runtime;
    }
    held = Runtime::get_default();
    return *held;
}

/// ScanCall: what every task of one call shares, resolved from the index
/// and the parameters.
struct ScanCall {
    const IndexIVF& ivf;
    const SearchParametersIVF* params;
    const SearchParametersIVFCCD* ccd; ///< params, if of that type
    SearchParametersIVFCCD shape;      ///< *ccd, or the defaults
    std::shared_ptr<Runtime> held;     ///< the default runtime, if used
    Runtime* runtime;
    uint32_t table_id;
    TrafficSink* sink;
    const IDSelector* sel;
    bool store_pairs;
    size_t nprobe;
    idx_t max_codes;
    size_t split_above; ///< lists longer than this are cut...
    size_t chunk_codes; ///< ...into chunks of this many codes (>= 1)

    ScanCall(
            const IndexIVF& ivf_in,
            const SearchParametersIVF* params_in,
            bool store_pairs_in)
            : ivf(ivf_in),
              params(params_in),
              ccd(dynamic_cast<const SearchParametersIVFCCD*>(params_in)),
              sel(params_in ? params_in->sel : nullptr),
              store_pairs(store_pairs_in),
              nprobe(nprobe_of(ivf_in, params_in)),
              max_codes(params_in ? params_in->max_codes : ivf_in.max_codes) {
        if (ccd != nullptr) {
            shape = *ccd;
            FAISS_THROW_IF_NOT_FMT(
                    shape.helpers >= -1,
                    "SearchParametersIVFCCD: helpers must be -1 (the cost "
                    "model decides), 0 or more (got %d)",
                    shape.helpers);
            // Finite too: an infinite factor overflowed the chunk sizes'
            // size_t (fuzz_search_params), and split every list.
            FAISS_THROW_IF_NOT_FMT(
                    shape.split_factor >= 0 && shape.chunk_factor >= 0 &&
                            std::isfinite(shape.split_factor) &&
                            std::isfinite(shape.chunk_factor),
                    "SearchParametersIVFCCD: split_factor (%g) and "
                    "chunk_factor (%g) must be finite and >= 0",
                    shape.split_factor,
                    shape.chunk_factor);
            FAISS_THROW_IF_NOT_FMT(
                    ccd->table_id >= -1 && ccd->table_id < 0xffffffff,
                    "SearchParametersIVFCCD: table_id must be -1 (derived "
                    "from the index) or 0..0xfffffffe; 0xffffffff is "
                    "reserved (got %" PRId64 ")",
                    int64_t(ccd->table_id));
            FAISS_THROW_IF_NOT_FMT(
                    shape.list_major_min_batch >= -1,
                    "SearchParametersIVFCCD: list_major_min_batch must be -1 "
                    "(the list sizes decide) or >= 0 (got %" PRId64 ")",
                    int64_t(shape.list_major_min_batch));
        }
        runtime = &call_runtime(params_in, held);
        table_id = ccd && ccd->table_id >= 0 ? uint32_t(ccd->table_id)
                                             : table_id_of(ivf);
        sink = ccd && ccd->traffic_sink ? ccd->traffic_sink
                                        : runtime->traffic_sink();
        // store_pairs labels are offsets from the start of what a scanner
        // is given: lists are never cut then.
        split_above = chunk_codes = SIZE_MAX;
        if (shape.split_factor > 0 && !store_pairs) {
            const double avg =
                    std::max(1.0, double(ivf.ntotal) / double(ivf.nlist));
            // Saturated: a huge (finite) factor means "never cut".
            auto codes = [](double v) {
                return v < 1e19 ? size_t(v) : SIZE_MAX;
            };
            chunk_codes = std::max(
                    {size_t(1),
                     shape.min_chunk,
                     codes(shape.chunk_factor * avg)});
            split_above =
                    std::max(chunk_codes, codes(shape.split_factor * avg));
        }
    }

    std::unique_ptr<InvertedListScanner> scanner() const {
        return std::unique_ptr<InvertedListScanner>(
                ivf.get_InvertedListScanner(store_pairs, sel));
    }

    /// items: the scans of a batch, query by query, probe by probe, chunk
    /// by chunk; empty lists and missing probes (-1 keys) are left out, and
    /// a query's probes stop once max_codes codes are reached, as in
    /// IndexIVF::search_preassigned.
    std::vector<ScanItem> items(idx_t n, const idx_t* keys, bool split) const {
        std::vector<ScanItem> out;
        out.reserve(size_t(n) * nprobe);
        for (idx_t q = 0; q < n; q++) {
            idx_t nscan = 0;
            for (size_t p = 0; p < nprobe; p++) {
                const idx_t list_no = keys[q * nprobe + p];
                if (list_no < 0) {
                    continue;
                }
                FAISS_THROW_IF_NOT_FMT(
                        list_no < idx_t(ivf.nlist),
                        "Invalid key=%" PRId64 " nlist=%zd",
                        int64_t(list_no),
                        ivf.nlist);
                const size_t size = ivf.invlists->list_size(list_no);
                if (size == 0) {
                    continue;
                }
                const size_t step =
                        split && size > split_above ? chunk_codes : size;
                for (size_t begin = 0; begin < size; begin += step) {
                    out.push_back(
                            {q,
                             list_no,
                             p,
                             begin,
                             std::min(size, begin + step)});
                }
                nscan += idx_t(size);
                if (max_codes != 0 && nscan >= max_codes) {
                    break;
                }
            }
        }
        return out;
    }

    /// runs_alone: whether the calling thread scans this batch alone: the
    /// call asks for no helper, or (helpers = -1) the batch's estimated
    /// scan time is below what any helper could pay for, with `others`
    /// other callers on the pool (ccd::helpers_may_pay). The estimate
    /// counts each probed list whole (max_codes aside). A batch scanned
    /// alone is not cut into chunks: they serve parallelism only.
    ///
    /// split: the batch would be shared scan by scan (a query's lists
    /// among participants that all merge into its heap). It runs alone
    /// too unless half the split estimate plus a hand-off beats the alone
    /// one: the least a split can do is halve the work between two.
    bool runs_alone(double codes, int others, bool split, bool list_major)
            const {
        if (shape.helpers >= 0) {
            return shape.helpers == 0;
        }
        const Pool& pool = runtime->pool();
        const double alone_ns = codes * ns_per_code(list_major);
        const double handoff_ns = pool.handoff_ns();
        if (!helpers_may_pay(
                    alone_ns,
                    pool.num_workers(),
                    others,
                    handoff_ns)) {
            return true;
        }
        return split &&
                codes * split_scan_ns_per_code(table_id, ivf.code_size) / 2 +
                        handoff_ns >=
                alone_ns;
    }

    /// ns_per_code: the measured scan cost per code of this index in the
    /// given order (list-major's own once measured).
    double ns_per_code(bool list_major) const {
        const double lm =
                list_major ? list_major_scan_ns_per_code(table_id) : 0;
        return lm > 0 ? lm : scan_ns_per_code(table_id, ivf.code_size);
    }

    /// probed_codes: the codes of the batch's probed lists, each counted
    /// whole (max_codes aside).
    double probed_codes(idx_t n, const idx_t* keys) const {
        double codes = 0;
        for (size_t i = 0; i < size_t(n) * nprobe; i++) {
            if (keys[i] >= 0 && keys[i] < idx_t(ivf.nlist)) {
                codes += double(ivf.invlists->list_size(keys[i]));
            }
        }
        return codes;
    }

    /// list_major: whether a k-NN batch of n queries over `codes` probed
    /// codes is scanned list-major: from list_major_min_batch queries when
    /// the call sets it, else (-1) from kAutoListMajorMinBatch queries as
    /// BatchShape's choose_list_major takes it, from this index's measured
    /// terms and its history of priced calls.
    ShapeChoice list_major(idx_t n, double codes) const {
        if (shape.list_major_min_batch >= 0) {
            return {n >= shape.list_major_min_batch, false};
        }
        if (n < kAutoListMajorMinBatch) {
            return {};
        }
        BatchCounts b;
        b.queries = double(n);
        b.items = double(n) * double(nprobe);
        b.codes = codes;
        b.code_size = double(ivf.code_size);
        return choose_list_major(
                scan_terms(table_id, ivf.code_size),
                b,
                priced_call(table_id));
    }

    /// add_stats: the call's counters into `stats` (may be null).
    void add_stats(
            IndexIVFStats* stats,
            idx_t n,
            const std::vector<ScanItem>& items,
            size_t nheap) const {
        if (stats == nullptr) {
            return;
        }
        size_t nlist = 0, ndis = 0;
        for (const ScanItem& it : items) {
            nlist += it.begin == 0;
            ndis += it.end - it.begin;
        }
        std::lock_guard<std::mutex> lock(stats_mutex());
        stats->nq += n;
        stats->nlist += nlist;
        stats->ndis += ndis;
        stats->nheap_updates += nheap;
    }
};

/// ScanPlan: a batch's place among the pool's callers, whether its
/// calling thread scans it alone (ScanCall::runs_alone), its order
/// (list-major from list_major_min_batch queries) and its grain.
///
/// by_query: a query-major batch with more queries than the pool has
/// workers is shared query by query (a unit is a run of one query's scans,
/// in probe order, of lists on one CCD), not scan by scan: participants on the
/// same query would merge into one heap under one lock, passing its cache lines
/// back and forth (bench_serving, batches of 4 and 16: 0.70-0.81x stock's mode
/// 0, which gives each thread whole queries). Lists are cut in chunks only when
/// a single query's scans are shared.
struct ScanPlan {
    Pool::CallerScope scope;
    double codes;
    ShapeChoice choice; ///< {} for range search (query-major)
    bool list_major;
    bool alone;
    bool by_query;
    ScanPlan(const ScanCall& call, idx_t n, const idx_t* keys, bool knn)
            : scope(call.runtime->pool()),
              codes(call.probed_codes(n, keys)),
              choice(knn ? call.list_major(n, codes) : ShapeChoice()),
              list_major(choice.list_major),
              alone(call.runs_alone(
                      codes,
                      scope.others(),
                      !list_major && n <= call.runtime->pool().num_workers(),
                      list_major)),
              by_query(
                      !alone && !list_major &&
                      n > call.runtime->pool().num_workers()) {}
    /// split: whether lists are cut in chunks.
    bool split() const {
        return !alone && !by_query;
    }
    /// cost_shape: the shape this call's measured cost is an estimate of.
    ScanShape cost_shape() const {
        if (list_major) {
            return ScanShape::list_major;
        }
        return alone ? ScanShape::alone
                     : (by_query ? ScanShape::other : ScanShape::split);
    }
};

// Queries per list-major unit: enough to amortise the list's trip into
// cache, few enough that a hot list still spreads over its CCD's cores.
constexpr size_t kQueriesPerListUnit = 32;

/// ScanUnit: items [first, last) of one list chunk, the grain participants
/// claim; keyed by the list's MappingId.
struct ScanUnit {
    size_t first;
    size_t last;
    MappingId id;
    size_t codes;
};

/// ScanShare: the scans of one call as a WorkShare: units grouped by the
/// CCD their lists map to, the factory of the participants' runners, and
/// what they measure.
template <class Body>
struct ScanShare final : RunnerFactory {
    const ScanCall& call;
    const Body& body;
    const std::vector<ScanItem>& items;
    std::vector<ScanUnit> units;
    mutable std::atomic<int64_t> scan_ns{0};
    mutable std::atomic<size_t> scanned{0};

    /// Runner: one participant's scanner state; its measurements join the
    /// call's, and its traffic goes to the sink, when it dies (before its
    /// last unit is reported done).
    ///
    /// Traffic is summed per list over the participant's units and
    /// recorded once per list: a by-query batch of 131,072 items recorded
    /// one record per item, which the Monitor's buffers held until its
    /// next tick (2 MB a slice, issue 28's memory).
    struct Runner final : UnitRunner {
        const ScanShare& share;
        typename Body::Local local;
        int64_t ns = 0;
        size_t codes = 0;
        std::unordered_map<idx_t, size_t> traffic; ///< list -> codes

        explicit Runner(const ScanShare& s) : share(s), local(s.body) {}
        ~Runner() override {
            share.body.finish(local);
            share.scan_ns.fetch_add(ns, std::memory_order_relaxed);
            share.scanned.fetch_add(codes, std::memory_order_relaxed);
            if (TrafficSink* sink = share.call.sink) {
                const size_t bytes_per_code =
                        share.call.ivf.code_size + sizeof(idx_t);
                for (const auto& [list_no, n] : traffic) {
                    sink->record(
                            make_mapping_id(
                                    share.call.table_id,
                                    uint32_t(list_no)),
                            n,
                            n * bytes_per_code);
                }
            }
        }
        void run(int64_t u) override {
            const ScanUnit& unit = share.units[u];
            const int64_t t0 = steady_now_ns();
            for (size_t i = unit.first; i < unit.last; i++) {
                share.body.scan(local, share.items[i]);
            }
            ns += steady_now_ns() - t0;
            codes += unit.codes;
            if (share.call.sink != nullptr) {
                count_traffic(unit);
            }
        }

        /// count_traffic: the unit's codes per list. A by-query unit spans
        /// several lists (of one CCD): each gets its own codes, not the
        /// unit's first list all of them. One map update per run of items
        /// of the same list (a list-major unit is one run).
        void count_traffic(const ScanUnit& unit) {
            for (size_t b = unit.first; b < unit.last;) {
                const idx_t list_no = share.items[b].list_no;
                size_t n = 0, e = b;
                for (; e < unit.last && share.items[e].list_no == list_no;
                     e++) {
                    n += share.items[e].end - share.items[e].begin;
                }
                traffic[list_no] += n;
                b = e;
            }
        }
    };

    ScanShare(const ScanCall& c, const Body& b, const std::vector<ScanItem>& it)
            : call(c), body(b), items(it) {}

    std::unique_ptr<UnitRunner> make_runner() const override {
        return std::unique_ptr<UnitRunner>(new Runner(*this));
    }

    /// cut: consecutive items of the same list chunk form one unit, at
    /// most `max_items` of them; by_query: consecutive items of the same
    /// query whose lists map to the same CCD (ScanPlan::by_query).
    void cut(size_t max_items, bool by_query) {
        Pool& pool = call.runtime->pool();
        auto ccd_of = [&](size_t i) {
            return pool.pick_ccd(
                    make_mapping_id(call.table_id, uint32_t(items[i].list_no)));
        };
        for (size_t b = 0; b < items.size();) {
            size_t e = b + 1;
            if (by_query) {
                const int ccd = ccd_of(b);
                while (e < items.size() && items[e].q == items[b].q &&
                       ccd_of(e) == ccd) {
                    e++;
                }
            }
            while (!by_query && e < items.size() && e - b < max_items &&
                   items[e].list_no == items[b].list_no &&
                   items[e].begin == items[b].begin) {
                e++;
            }
            size_t codes = 0;
            for (size_t i = b; i < e; i++) {
                codes += items[i].end - items[i].begin;
            }
            units.push_back(
                    {b,
                     e,
                     make_mapping_id(call.table_id, uint32_t(items[b].list_no)),
                     codes});
            b = e;
        }
    }

    /// group: order the units by the CCD their lists map to (stable: each
    /// group keeps the call's order; the last group holds units the policy
    /// does not place, as under flat_steal and round_robin), fill `groups`
    /// and return the plan's input for them (other_callers left to set).
    HelperPlanInput
    group(Pool& pool, double ns_per_code, std::vector<ShareGroup>& groups) {
        const Topology& topo = pool.topology();
        const int nccd = topo.num_ccds();
        std::vector<int> ccd_of_unit(units.size());
        std::vector<size_t> count(nccd + 1, 0);
        for (size_t u = 0; u < units.size(); u++) {
            const int c = pool.pick_ccd(units[u].id);
            ccd_of_unit[u] = c >= 0 && c < nccd ? c : nccd;
            count[ccd_of_unit[u]]++;
        }
        std::vector<size_t> at(nccd + 1, 0);
        for (int g = 1; g <= nccd; g++) {
            at[g] = at[g - 1] + count[g - 1];
        }
        const std::vector<size_t> starts = at;
        std::vector<ScanUnit> sorted(units.size());
        for (size_t u = 0; u < units.size(); u++) {
            sorted[at[ccd_of_unit[u]]++] = units[u];
        }
        units.swap(sorted);

        HelperPlanInput in;
        in.caller_ccd = pool.caller_ccd();
        in.handoff_ns = pool.handoff_ns();
        for (int c = 0; c < nccd; c++) {
            in.ccd_workers.push_back(topo.ccd_size(c));
        }
        for (int g = 0; g <= nccd; g++) {
            const size_t b = starts[g], e = b + count[g];
            if (b == e) {
                continue;
            }
            double codes = 0;
            for (size_t u = b; u < e; u++) {
                codes += double(units[u].codes);
            }
            ShareGroup sg;
            sg.id = units[b].id;
            sg.begin = int64_t(b);
            sg.end = int64_t(e);
            groups.push_back(sg);
            in.work_ns.push_back(codes * ns_per_code);
            in.units.push_back(int64_t(e - b));
            in.group_ccd.push_back(g < nccd ? g : -1);
        }
        return in;
    }

    /// run: run the share as `plan` has it (alone or not, its order, its
    /// other callers of the pool, whether its shape runs to be measured).
    /// Alone, the caller runs every unit in order, without a WorkShare;
    /// otherwise the units are grouped by CCD (group() above) and the
    /// helpers planned from the measured costs.
    ///
    /// A list-major call's cost is noted as what it held of the machine:
    /// its sort (`order_ns`, in the caller) plus its wall time once per
    /// participant, so the waits for its larger units' tail count. Its
    /// units alone measured an SQ8 batch of 4,000 queries cheaper per code
    /// than query-major while its calls took 9% longer.
    void run(const ScanPlan& plan, int64_t order_ns) {
        const bool alone = plan.alone, list_major = plan.list_major;
        Pool& pool = call.runtime->pool();
        const int64_t t_start = steady_now_ns();
        const double ns_per_code = call.ns_per_code(list_major);
        std::vector<ShareGroup> groups;
        int caller_first = 0;
        double estimated_ns = 0;
        ShareStats st;
        if (alone) {
            // The caller scans every unit itself, in order: no share to
            // set up. The body still scans into seeded heaps and merges
            // (not straight into the answer as FAISS's loop does), so that
            // ties resolve the same whichever shape the cost model picks.
            size_t codes = 0;
            for (const ScanUnit& unit : units) {
                codes += unit.codes;
            }
            estimated_ns = double(codes) * ns_per_code;
            {
                Runner runner(*this);
                for (size_t u = 0; u < units.size(); u++) {
                    runner.run(int64_t(u));
                }
            }
            st.units = st.units_by_caller = int64_t(units.size());
        } else {
            HelperPlanInput in = group(pool, ns_per_code, groups);
            in.other_callers = plan.scope.others();
            caller_first =
                    int(std::find(
                                in.group_ccd.begin(),
                                in.group_ccd.end(),
                                in.caller_ccd) -
                        in.group_ccd.begin());
            if (caller_first == int(groups.size())) {
                caller_first = 0;
            }
            const std::vector<int> helpers = call.shape.helpers < 0
                    ? plan_helpers(in)
                    : std::vector<int>(groups.size(), call.shape.helpers);
            for (size_t g = 0; g < groups.size(); g++) {
                groups[g].helpers = helpers[g];
                estimated_ns += in.work_ns[g];
            }
            st = run_shared(pool, groups, caller_first, *this);
        }
        const double held_ns = list_major
                ? double(order_ns) +
                        double(steady_now_ns() - t_start) *
                                double(1 + st.helpers_with_units)
                : double(scan_ns.load(std::memory_order_relaxed));
        note_scan_cost(
                call.table_id,
                held_ns,
                double(scanned.load(std::memory_order_relaxed)),
                plan.cost_shape(),
                plan.choice.explore);
        std::lock_guard<std::mutex> lock(stats_mutex());
        IVFSearchCCDStats& s = ivf_ccd_stats;
        s.calls++;
        s.inline_calls += st.helpers_submitted == 0;
        s.list_major_calls += list_major;
        s.units += size_t(st.units);
        s.units_by_caller += size_t(st.units_by_caller);
        s.helpers += size_t(st.helpers_submitted);
        s.helpers_with_units += size_t(st.helpers_with_units);
        s.estimated_ms += estimated_ns * 1e-6;
        s.scan_ms += double(scan_ns.load(std::memory_order_relaxed)) * 1e-6;
    }
};

/// run_scans: run the batch's scans, query-major or list-major, in the
/// calling thread and the helpers the plan gives it, then ask
/// InterruptCallback once (in this thread). List-major orders the items by
/// list chunk (stable: by query within one).
template <class Body>
void run_scans(
        const ScanCall& call,
        const ScanPlan& plan,
        std::vector<ScanItem>& items,
        const Body& body) {
    size_t max_items = 1;
    const int64_t t_order = steady_now_ns();
    if (plan.list_major) {
        std::stable_sort(
                items.begin(),
                items.end(),
                [](const ScanItem& a, const ScanItem& b) {
                    return a.list_no != b.list_no ? a.list_no < b.list_no
                                                  : a.begin < b.begin;
                });
        max_items = kQueriesPerListUnit;
    }
    const int64_t order_ns = steady_now_ns() - t_order;
    try {
        ScanShare<Body> share(call, body, items);
        share.cut(max_items, plan.by_query);
        share.run(plan, order_ns);
    } catch (const std::exception& e) {
        // As IndexIVF::search_preassigned reports a scan's error.
        FAISS_THROW_FMT(
                "search interrupted with: %s  %s",
                demangle_cpp_symbol(typeid(e).name()).c_str(),
                e.what());
    }
    if (InterruptCallback::is_interrupted()) {
        FAISS_THROW_MSG("computation interrupted");
    }
}

/// KnnScan: the body of k-NN scan tasks.
template <class C>
struct KnnScan {
    const ScanCall& call;
    const float* x;
    idx_t k;
    const float* coarse_dis;
    float* distances;
    idx_t* labels;
    QueryLock* locks;
    std::atomic<size_t>* nheap;

    /// Local: one participant's scanner and heap buffers.
    struct Local {
        std::unique_ptr<InvertedListScanner> scanner;
        std::vector<float> dis;
        std::vector<idx_t> ids;
        size_t updates = 0;
        idx_t q = -1; ///< the query set in the scanner
        /// The heap's first `clean` entries hold only `seed` (labels -1):
        /// the last scan changed nothing, so the next one with the same
        /// seed and at most that many slots needs no refill.
        idx_t clean = 0;
        float seed = 0;
        /// One item in kTermSampleEvery is timed part by part.
        unsigned tick = 0;
        TermSample sample;
        explicit Local(const KnnScan& b)
                : scanner(b.call.scanner()), dis(b.k), ids(b.k) {}
    };

    void finish(Local& local) const {
        nheap->fetch_add(local.updates, std::memory_order_relaxed);
        note_scan_terms(call.table_id, local.sample);
    }

    /// Lap: the timer of a sampled item; a lap of an unsampled one is 0.
    struct Lap {
        bool on;
        int64_t last;
        explicit Lap(bool timed)
                : on(timed), last(timed ? steady_now_ns() : 0) {}
        double operator()() {
            if (!on) {
                return 0;
            }
            const int64_t now = steady_now_ns();
            const int64_t ns = now - last;
            last = now;
            return double(ns);
        }
    };

    void scan(Local& local, const ScanItem& item) const {
        const InvertedLists* il = call.ivf.invlists;
        InvertedListScanner& scanner = *local.scanner;
        TermSample& sample = local.sample;
        const bool timed = local.tick++ % kTermSampleEvery == 0;
        Lap lap(timed);
        if (local.q != item.q) {
            scanner.set_query(x + item.q * call.ivf.d);
            local.q = item.q;
            sample.set_query_ns += lap();
            sample.set_queries += timed;
        }
        scanner.set_list(
                item.list_no,
                coarse_dis[item.q * call.nprobe + item.p]);
        sample.set_list_ns += lap();
        sample.set_lists += timed;
        InvertedLists::ScopedCodes codes(il, item.list_no);
        InvertedLists::ScopedIds ids(il, item.list_no);
        float* local_dis = local.dis.data();
        idx_t* local_ids = local.ids.data();
        // Seed the local heap just past the query's current k-th distance
        // b: a code worse than b can never reach the answer (that bound
        // only tightens), so the scanner rejects it at once instead of
        // filling a fresh heap. Without a seed, per-task heaps cost 21-36%
        // more scan time than one heap per query (bench_ivf, "scan cost on
        // one thread").
        //
        // Ties. Just past b, not at b: a scanner admits only codes strictly
        // better than its heap's top, so a seed at b would drop a code tied
        // with b, and which codes tie with a moving bound depends on which
        // tasks finished first. With the seed past b, and the merge below
        // admitting by (distance, label), the answer is the k smallest
        // (distance, label) pairs of what the tasks keep, and what a task
        // keeps at or under the final k-th distance does not depend on the
        // seed (codes worse than that only fill slots a better one takes):
        // the same answer every run, whatever the timing.
        float* dis = distances + item.q * k;
        idx_t* lab = labels + item.q * k;
        QueryLock& lock = locks[item.q];
        float bound;
        {
            std::lock_guard<QueryLock> guard(lock);
            bound = dis[0];
        }
        const float seed = C::nextafter(bound);
        // A heap of m = min(k, codes in the item) slots keeps what one of
        // k slots would: with no more codes than slots, neither ever
        // evicts a code it admitted. Small lists (k = 100 over lists of
        // tens of codes) then fill and merge tens of slots, not k: the
        // per-item cost that made Python's one-query searches 0.79x stock
        // with k = 100 (benchs/python/bench_serving.py).
        const size_t ncodes = item.end - item.begin;
        const idx_t m = std::min<idx_t>(k, idx_t(ncodes));
        if (!(local.clean >= m && local.seed == seed)) {
            std::fill(local_dis, local_dis + m, seed);
            std::fill(local_ids, local_ids + m, idx_t(-1));
        }
        sample.merge_ns += lap();
        sample.merges += timed;
        const size_t updates = scanner.scan_codes(
                ncodes,
                codes.get() + item.begin * il->code_size,
                ids.get() + item.begin,
                local_dis,
                local_ids,
                m);
        local.updates += updates;
        lap(); // the scan itself: timed whole, with its unit
        // No update: the heap is as seeded and holds nothing to merge
        // (scan_codes counts every change it makes to the heap, as
        // IndexIVFStats::nheap_updates has it). Most late probes of a
        // query end here once its k-th distance is tight.
        if (updates == 0) {
            local.clean =
                    local.clean >= m && local.seed == seed ? local.clean : m;
            local.seed = seed;
            return;
        }
        local.clean = 0;
        {
            std::lock_guard<QueryLock> guard(lock);
            for (idx_t j = 0; j < m; j++) {
                if (local_ids[j] != -1 &&
                    C::cmp2(dis[0], local_dis[j], lab[0], local_ids[j])) {
                    heap_replace_top<C>(
                            k,
                            dis,
                            lab,
                            local_dis[j],
                            local_ids[j]);
                }
            }
        }
        sample.merge_ns += lap();
    }
};

/// measure_setup: on a table's first call whose shape is priced (auto
/// list-major, a batch large enough), the caller times set_query and
/// set_list on up to kSetupProbes of the batch's queries before planning,
/// so the first plan already counts them (BatchShape.h).
constexpr idx_t kSetupProbes = 4;

void measure_setup(
        const ScanCall& call,
        idx_t n,
        const float* x,
        const idx_t* keys,
        const float* coarse_dis) {
    if (call.shape.list_major_min_batch >= 0 || n < kAutoListMajorMinBatch ||
        has_setup_terms(call.table_id)) {
        return;
    }
    std::unique_ptr<InvertedListScanner> scanner = call.scanner();
    TermSample sample;
    for (idx_t q = 0; q < std::min(n, kSetupProbes); q++) {
        int64_t t0 = steady_now_ns();
        scanner->set_query(x + q * call.ivf.d);
        int64_t t1 = steady_now_ns();
        sample.set_query_ns += double(t1 - t0);
        sample.set_queries++;
        for (size_t p = 0; p < call.nprobe; p++) {
            const idx_t list_no = keys[q * call.nprobe + p];
            if (list_no >= 0 && list_no < idx_t(call.ivf.nlist)) {
                scanner->set_list(list_no, coarse_dis[q * call.nprobe + p]);
                sample.set_list_ns += double(steady_now_ns() - t1);
                sample.set_lists++;
                break;
            }
        }
    }
    note_scan_terms(call.table_id, sample);
}

/// knn_scan_slice: the k-NN scans of queries [0, n) of these arrays, as
/// one plan.
template <class C>
void knn_scan_slice(
        const ScanCall& call,
        idx_t n,
        const float* x,
        idx_t k,
        const idx_t* keys,
        const float* coarse_dis,
        float* distances,
        idx_t* labels,
        IndexIVFStats* stats) {
    const bool heap_init =
            !(call.ivf.parallel_mode & call.ivf.PARALLEL_MODE_NO_HEAP_INIT);
    if (heap_init) {
        for (idx_t q = 0; q < n; q++) {
            heap_heapify<C>(k, distances + q * k, labels + q * k);
        }
    }
    measure_setup(call, n, x, keys, coarse_dis);
    const ScanPlan plan(call, n, keys, /*knn=*/true);
    std::vector<ScanItem> items = call.items(n, keys, plan.split());
    std::unique_ptr<QueryLock[]> locks(new QueryLock[n]);
    std::atomic<size_t> nheap{0};
    const KnnScan<C> body{
            call,
            x,
            k,
            coarse_dis,
            distances,
            labels,
            locks.get(),
            &nheap};
    run_scans(call, plan, items, body);
    if (heap_init) {
        for (idx_t q = 0; q < n; q++) {
            heap_reorder<C>(k, distances + q * k, labels + q * k);
        }
    }
    call.add_stats(stats, n, items, nheap.load(std::memory_order_relaxed));
}

// A batch's scans go in slices of about this many (query, list) items: the
// items, the plan and the locks of one slice at a time. A 200,000-query
// batch at nprobe 4 made 32 MB of items at once, which glibc kept in the
// heap after the call (issue 28, 4); a slice of 131,072 items is 5 MB,
// and still thousands of queries, as wide as any plan gets.
constexpr size_t kSliceItems = size_t(1) << 17;

/// knn_scans: the k-NN scans of a batch, a slice of queries at a time.
/// Each query's heap is its own, so slicing changes no answer.
template <class C>
void knn_scans(
        const ScanCall& call,
        idx_t n,
        const float* x,
        idx_t k,
        const idx_t* keys,
        const float* coarse_dis,
        float* distances,
        idx_t* labels,
        IndexIVFStats* stats) {
    const idx_t slice = idx_t(std::max<size_t>(1, kSliceItems / call.nprobe));
    for (idx_t q0 = 0; q0 < n; q0 += slice) {
        const idx_t m = std::min(slice, n - q0);
        knn_scan_slice<C>(
                call,
                m,
                x + q0 * call.ivf.d,
                k,
                keys + q0 * call.nprobe,
                coarse_dis + q0 * call.nprobe,
                distances + q0 * k,
                labels + q0 * k,
                stats);
    }
}

/// HitBuffer: one participant's range hits, every scan of theirs in one
/// FAISS partial result (its buffers grow by 1,024 hits), kept until the
/// merge. Linked into a HitStore when the participant finishes.
struct HitBuffer {
    RangeSearchPartialResult found;
    size_t count = 0; ///< hits in `found`
    HitBuffer* next = nullptr;
    explicit HitBuffer(RangeSearchResult* proto) : found(proto) {}
};

/// HitStore: the participants' HitBuffers of one call, freed with it.
/// keep() pushes without allocating (it runs in a runner's destructor);
/// any participant thread. The merge reads them after run_scans returned,
/// which happens after every runner died: the release/acquire of the
/// work share's completion orders their writes before the reads.
struct HitStore {
    RangeSearchResult proto{1, /*alloc_lims=*/false};
    std::atomic<HitBuffer*> head{nullptr};

    HitStore() {
        proto.buffer_size = 1024;
    }
    HitStore(const HitStore&) = delete;
    HitStore& operator=(const HitStore&) = delete;
    ~HitStore() {
        for (HitBuffer* b = head.load(std::memory_order_relaxed); b;) {
            HitBuffer* next = b->next;
            delete b;
            b = next;
        }
    }
    void keep(std::unique_ptr<HitBuffer> b) noexcept {
        // relaxed: only the list's shape; the merge is ordered after by
        // the share's completion (above).
        HitBuffer* raw = b.release();
        raw->next = head.load(std::memory_order_relaxed);
        while (!head.compare_exchange_weak(
                raw->next,
                raw,
                std::memory_order_relaxed)) {
        }
    }
};

/// ItemHits: where one scan's range results are: `n` hits from `offset`
/// in the buffer of the participant that scanned it.
struct ItemHits {
    HitBuffer* in = nullptr;
    size_t offset = 0;
    size_t n = 0;
};

/// RangeScan: the body of range scan tasks. A participant's hits go to
/// its own buffer, so tasks share nothing; no scan allocates, besides a
/// buffer of 1,024 hits when the last one is full.
struct RangeScan {
    const ScanCall& call;
    const float* x;
    float radius;
    const float* coarse_dis;
    const ScanItem* items;
    ItemHits* hits;
    HitStore& store;

    /// Local: one participant's scanner and hit buffer.
    struct Local {
        std::unique_ptr<InvertedListScanner> scanner;
        std::unique_ptr<HitBuffer> buffer;
        idx_t q = -1; ///< the query set in the scanner
        explicit Local(const RangeScan& b)
                : scanner(b.call.scanner()),
                  buffer(std::make_unique<HitBuffer>(&b.store.proto)) {}
    };

    void finish(Local& local) const {
        store.keep(std::move(local.buffer));
    }

    void scan(Local& local, const ScanItem& item) const {
        const InvertedLists* il = call.ivf.invlists;
        InvertedListScanner& scanner = *local.scanner;
        HitBuffer& buffer = *local.buffer;
        if (local.q != item.q) {
            scanner.set_query(x + item.q * call.ivf.d);
            local.q = item.q;
        }
        scanner.set_list(
                item.list_no,
                coarse_dis[item.q * call.nprobe + item.p]);
        InvertedLists::ScopedCodes codes(il, item.list_no);
        InvertedLists::ScopedIds ids(il, item.list_no);
        // One query result at a time: cleared after the scan, so
        // `queries` keeps its one slot.
        RangeQueryResult& qres = buffer.found.new_result(item.q);
        scanner.scan_codes_range(
                item.end - item.begin,
                codes.get() + item.begin * il->code_size,
                ids.get() + item.begin,
                radius,
                qres);
        ItemHits& h = hits[&item - items];
        h.in = &buffer;
        h.offset = buffer.count;
        h.n = qres.nres;
        buffer.count += qres.nres;
        buffer.found.queries.clear();
    }
};

/// OmpOneThread: holds FAISS's OpenMP regions to one thread in the calling
/// thread for a scope (omp_set_num_threads is per thread), so a quantizer
/// call never starts a team on top of the pool's workers.
struct OmpOneThread {
    int saved;
    OmpOneThread() : saved(omp_get_max_threads()) {
        omp_set_num_threads(1);
    }
    ~OmpOneThread() {
        omp_set_num_threads(saved);
    }
};

/// hold_blas_to_one_thread: OpenBLAS (Debian's pthreads build) wakes its
/// own threads for every quantizer batch of distance_compute_blas_threshold
/// (20) queries or more, whatever OpenMP is set to, on top of the pool's
/// workers. OpenBLAS 0.3.21 has no per-thread setting: the first search in
/// the CCD mode sets the process's to one thread, for good (the pool is the
/// process's parallelism; FAISS's usual advice with OpenMP is the same),
/// unless FAISS_CCD_KEEP_BLAS_THREADS is set to a non-empty value other
/// than "0". Found by name, so another BLAS is left alone.
void hold_blas_to_one_thread() {
    static const bool done = [] {
        const char* keep = std::getenv("FAISS_CCD_KEEP_BLAS_THREADS");
        if (keep != nullptr && *keep != '\0' && std::strcmp(keep, "0") != 0) {
            return false;
        }
        using SetThreads = void (*)(int);
        auto set = reinterpret_cast<SetThreads>(
                dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
        if (set != nullptr) {
            set(1);
        }
        return set != nullptr;
    }();
    (void)done;
}

/// CoarseShare: a batch's quantizer call as a WorkShare of slices
/// (BatchShape.h's coarse_cut); every participant quantizes its slices
/// with FAISS's OpenMP held to one thread and adds the time they took to
/// `ns`.
struct CoarseShare final : RunnerFactory {
    const IndexIVF& ivf;
    idx_t n;
    const float* x;
    size_t nprobe;
    const SearchParameters* quantizer_params;
    float* dis;
    idx_t* keys;
    CoarseCut cut;
    mutable std::atomic<int64_t> ns{0};

    CoarseShare(
            const IndexIVF& ivf,
            idx_t n,
            const float* x,
            size_t nprobe,
            const SearchParameters* quantizer_params,
            float* dis,
            idx_t* keys,
            CoarseCut cut)
            : ivf(ivf),
              n(n),
              x(x),
              nprobe(nprobe),
              quantizer_params(quantizer_params),
              dis(dis),
              keys(keys),
              cut(cut) {}

    struct Runner final : UnitRunner {
        const CoarseShare& share;
        OmpOneThread one; ///< this participant's thread, while it runs
        explicit Runner(const CoarseShare& s) : share(s) {}
        void run(int64_t slice) override {
            const CoarseShare& s = share;
            const idx_t i0 = s.cut.rows == 0 ? 0 : slice * s.cut.rows;
            const idx_t i1 = s.cut.rows == 0 || slice + 1 == s.cut.slices
                    ? s.n
                    : i0 + s.cut.rows;
            const int64_t t0 = steady_now_ns();
            s.ivf.quantizer->search(
                    i1 - i0,
                    s.x + i0 * s.ivf.d,
                    s.nprobe,
                    s.dis + i0 * s.nprobe,
                    s.keys + i0 * s.nprobe,
                    s.quantizer_params);
            s.ns.fetch_add(steady_now_ns() - t0, std::memory_order_relaxed);
        }
    };

    std::unique_ptr<UnitRunner> make_runner() const override {
        return std::unique_ptr<UnitRunner>(new Runner(*this));
    }
};

/// may_cut_coarse: whether `ivf`'s coarse assignment may be cut in
/// slices. A cut changes the last bits of the coarse distances (the BLAS
/// kernels round a call by its size), and codecs that add the coarse
/// distance to their own (IVFPQ by residual, SQ by residual with inner
/// product, any index not known here) would carry them into the answer:
/// theirs stays one call, as in modes 1-3 (mode 0's last bits change with
/// its thread count). Where they are not carried, a cut could only move
/// which list is probed between two lists whose centroids tie to the last
/// bit. Decided by type, not learnt: a table id names an address, which a
/// later index can reuse.
bool may_cut_coarse(const IndexIVF& ivf) {
    if (dynamic_cast<const IndexIVFFlat*>(&ivf) != nullptr) {
        return true; // and IndexIVFFlatDedup: no coarse term
    }
    if (auto sq = dynamic_cast<const IndexIVFScalarQuantizer*>(&ivf)) {
        return !sq->by_residual || sq->metric_type == METRIC_L2;
    }
    if (auto pq = dynamic_cast<const IndexIVFPQ*>(&ivf)) {
        return !pq->by_residual; // and IndexIVFPQR
    }
    return false;
}

/// CoarseAssignment: the nprobe nearest lists of every query of a batch:
/// one quantizer call in the calling thread, or, when the index allows a
/// cut (may_cut_coarse) and the batch's measured quantizer time pays for
/// hand-offs, slices of it on the pool (the caller takes slices too),
/// FAISS's OpenMP held to one thread in each participant.
struct CoarseAssignment {
    std::vector<idx_t> keys;
    std::vector<float> dis;
    double ms = 0;  ///< time the quantizer took
    int slices = 0; ///< slices shared with helpers (0: the caller alone)

    CoarseAssignment(
            const IndexIVF& ivf,
            idx_t n,
            const float* x,
            const SearchParametersIVF* params,
            Pool& pool,
            int other_callers) {
        const size_t nprobe = nprobe_of(ivf, params);
        keys.resize(n * nprobe);
        dis.resize(n * nprobe);
        hold_blas_to_one_thread();
        const uint32_t table_id = table_id_of(ivf);
        const CoarseCut cut = coarse_cut(
                long(n),
                n >= 2 * kCoarseAlign && may_cut_coarse(ivf)
                        ? coarse_ns_per_query(table_id)
                        : 0,
                pool.handoff_ns(),
                std::max(1, pool.num_workers() / (1 + other_callers)),
                long(distance_compute_blas_threshold));
        CoarseShare share(
                ivf,
                n,
                x,
                nprobe,
                params ? params->quantizer_params : nullptr,
                dis.data(),
                keys.data(),
                cut);
        slices = cut.helpers > 0 ? cut.slices : 0;
        const double t0 = getmillisecs();
        if (cut.helpers == 0) {
            // No cut (coarse_cut cuts only for helpers): the one call.
            CoarseShare::Runner(share).run(0);
        } else {
            std::vector<ShareGroup> groups(1);
            groups[0].end = cut.slices;
            groups[0].helpers = cut.helpers;
            run_shared(pool, groups, 0, share);
        }
        ms = getmillisecs() - t0;
        note_coarse_cost(
                table_id,
                double(share.ns.load(std::memory_order_relaxed)),
                double(n));
        ivf.invlists->prefetch_lists(keys.data(), keys.size());
    }
};

/// assign_then_scan: the coarse assignment, then `scan(coarse, &stats)`;
/// the call's times and counts go to indexIVF_stats as stock's search does.
template <class Scan>
void assign_then_scan(
        const IndexIVF& ivf,
        idx_t n,
        const float* x,
        const SearchParametersIVF* params,
        Scan&& scan) {
    // The whole search, quantizer included, is one caller of the pool:
    // with more concurrent searches than workers, they run in arrival
    // order (Pool::CallerScope). The scans' own scope nests in this one.
    std::shared_ptr<Runtime> held;
    Pool& pool = call_runtime(params, held).pool();
    Pool::CallerScope scope(pool);
    // FAISS's own loops around the scans (IVFPQR's refinement) go over
    // the n queries: no thread past them.
    const FallbackTeam team(true, n);
    const double t0 = getmillisecs();
    const CoarseAssignment coarse(ivf, n, x, params, pool, scope.others());
    IndexIVFStats local;
    scan(coarse, &local);
    const double total_ms = getmillisecs() - t0;
    std::lock_guard<std::mutex> lock(stats_mutex());
    indexIVF_stats.add(local);
    indexIVF_stats.quantization_time += coarse.ms;
    ivf_ccd_stats.coarse_slices += size_t(coarse.slices);
    indexIVF_stats.search_time += total_ms;
}

} // namespace

// ------------------------------------------------------------- public

int default_parallel_mode() {
    int mode = default_mode_.load(std::memory_order_acquire);
    if (mode == kUnset) {
        int expected = kUnset;
        // A bad variable throws here, in the first IVF constructor, every
        // time until it is fixed or set_default_parallel_mode is called.
        default_mode_.compare_exchange_strong(expected, mode_from_env());
        mode = default_mode_.load(std::memory_order_acquire);
    }
    return mode;
}

void set_default_parallel_mode(int mode) {
    check_parallel_mode(mode);
    default_mode_.store(mode, std::memory_order_release);
}

void check_parallel_mode(int mode) {
    // IndexIVF::PARALLEL_MODE_NO_HEAP_INIT, which FAISS 1.7.3 declares as
    // a (non-static) member.
    const int no_heap_init = 1024;
    const int base = mode & ~no_heap_init;
    FAISS_THROW_IF_NOT_FMT(
            (base >= 0 && base <= 3) || base == PARALLEL_MODE_CCD,
            "parallel_mode %d not supported: 0-3 or PARALLEL_MODE_CCD "
            "(%d), optionally | PARALLEL_MODE_NO_HEAP_INIT (%d)",
            mode,
            PARALLEL_MODE_CCD,
            no_heap_init);
}

namespace {

/// ccd_requested: the index's mode or the call's parameters ask for the
/// pool. Throws on a mode IndexIVF does not support.
bool ccd_requested(const IndexIVF& ivf, const SearchParametersIVF* params) {
    check_parallel_mode(ivf.parallel_mode);
    return (ivf.parallel_mode & PARALLEL_MODE_CCD) != 0 ||
            dynamic_cast<const SearchParametersIVFCCD*>(params) != nullptr;
}

} // namespace

FallbackTeam::FallbackTeam(bool ccd, idx_t n) {
    const int threads = omp_get_max_threads();
    if (ccd && n < threads) {
        saved_ = threads;
        omp_set_num_threads(int(std::max<idx_t>(1, n)));
    }
}

FallbackTeam::~FallbackTeam() {
    if (saved_ > 0) {
        omp_set_num_threads(saved_);
    }
}

bool uses_ccd_mode(const IndexIVF& ivf, const SearchParametersIVF* params) {
    return ccd_requested(ivf, params) && servable(ivf, params, false);
}

uint32_t table_id_of(const IndexIVF& ivf) {
    const uint32_t id =
            uint32_t(hash_mapping_id(uint64_t(uintptr_t(ivf.invlists))) >> 32);
    return id == table_of(kLocalMappingId) ? 0 : id;
}

void ivf_search(
        const IndexIVF& ivf,
        idx_t n,
        const float* x,
        idx_t k,
        float* distances,
        idx_t* labels,
        const SearchParametersIVF* params) {
    FAISS_THROW_IF_NOT_MSG(k > 0, "IVF search: k must be > 0");
    if (n == 0) {
        return;
    }
    // Virtual: an override (IVFPQR, IVFFlatDedup) does its part around the
    // scans, which come back to ivf_search_preassigned.
    assign_then_scan(
            ivf,
            n,
            x,
            params,
            [&](const CoarseAssignment& coarse, IndexIVFStats* stats) {
                ivf.search_preassigned(
                        n,
                        x,
                        k,
                        coarse.keys.data(),
                        coarse.dis.data(),
                        distances,
                        labels,
                        false,
                        params,
                        stats);
            });
}

void ivf_range_search(
        const IndexIVF& ivf,
        idx_t n,
        const float* x,
        float radius,
        RangeSearchResult* result,
        const SearchParametersIVF* params) {
    assign_then_scan(
            ivf,
            n,
            x,
            params,
            [&](const CoarseAssignment& coarse, IndexIVFStats* stats) {
                ivf.range_search_preassigned(
                        n,
                        x,
                        radius,
                        coarse.keys.data(),
                        coarse.dis.data(),
                        result,
                        false,
                        params,
                        stats);
            });
}

bool ivf_search_preassigned(
        const IndexIVF& ivf,
        idx_t n,
        const float* x,
        idx_t k,
        const idx_t* keys,
        const float* coarse_dis,
        float* distances,
        idx_t* labels,
        bool store_pairs,
        const SearchParametersIVF* params,
        IndexIVFStats* stats) {
    if (!ccd_requested(ivf, params) || !servable(ivf, params, store_pairs)) {
        return false;
    }
    FAISS_THROW_IF_NOT_MSG(
            !(params && params->sel && store_pairs),
            "selector and store_pairs cannot be combined");
    const ScanCall call(ivf, params, store_pairs);
    if (ivf.metric_type == METRIC_INNER_PRODUCT) {
        knn_scans<CMin<float, idx_t>>(
                call,
                n,
                x,
                k,
                keys,
                coarse_dis,
                distances,
                labels,
                stats);
    } else {
        knn_scans<CMax<float, idx_t>>(
                call,
                n,
                x,
                k,
                keys,
                coarse_dis,
                distances,
                labels,
                stats);
    }
    return true;
}

bool ivf_range_search_preassigned(
        const IndexIVF& ivf,
        idx_t n,
        const float* x,
        float radius,
        const idx_t* keys,
        const float* coarse_dis,
        RangeSearchResult* result,
        bool store_pairs,
        const SearchParametersIVF* params,
        IndexIVFStats* stats) {
    // FAISS's own range loop needs a scanner and runs modes 0, 1 and 2
    // only; it throws otherwise inside an OpenMP region, which aborts the
    // process: such calls are refused here, before it runs.
    FAISS_THROW_IF_NOT_MSG(
            servable(ivf, params, store_pairs, /*counts_codes=*/false),
            "range_search: this index has no InvertedListScanner");
    if (!ccd_requested(ivf, params)) {
        const int stock = stock_parallel_mode(ivf.parallel_mode);
        FAISS_THROW_IF_NOT_FMT(
                stock == 0 || stock == 1 || stock == 2,
                "range_search: parallel_mode %d not supported (FAISS's "
                "range search runs modes 0, 1, 2 and PARALLEL_MODE_CCD)",
                ivf.parallel_mode);
        return false;
    }
    FAISS_THROW_IF_NOT_MSG(
            result && result->nq == size_t(n),
            "IVF range search: result is null or its nq differs from n");
    ScanCall call(ivf, params, store_pairs);
    call.max_codes = 0; // FAISS's range search does not limit the codes
    const ScanPlan plan(call, n, keys, /*knn=*/false);
    std::vector<ScanItem> items = call.items(n, keys, plan.split());
    std::vector<ItemHits> hits(items.size());
    HitStore store;
    const RangeScan
            body{call, x, radius, coarse_dis, items.data(), hits.data(), store};
    // Query-major: the hits of a query then come in FAISS's order.
    run_scans(call, plan, items, body);

    std::fill(result->lims, result->lims + n + 1, 0);
    for (size_t i = 0; i < items.size(); i++) {
        result->lims[items[i].q] += hits[i].n;
    }
    result->do_allocation();
    std::vector<size_t> fill(result->lims, result->lims + n);
    for (size_t i = 0; i < items.size(); i++) {
        const idx_t q = items[i].q;
        if (hits[i].n > 0) {
            hits[i].in->found.copy_range(
                    hits[i].offset,
                    hits[i].n,
                    result->labels + fill[q],
                    result->distances + fill[q]);
        }
        fill[q] += hits[i].n;
    }
    call.add_stats(stats, n, items, 0);
    return true;
}

} // namespace ccd
} // namespace faiss
