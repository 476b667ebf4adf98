#include <faiss/ivf_ccd/ResolvedCall.h>

#include <faiss/IVFScanCost.h>
#include <faiss/ccd_scheduler/HeldAcrossForks.h>
#include <faiss/ccd_scheduler/HelperPlan.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/invlists/InvertedLists.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>

namespace faiss {
namespace ccd {
namespace ivf {

size_t nprobe_of(const IndexIVF& ivf, const SearchParametersIVF* params) {
    const size_t nprobe =
            std::min(ivf.nlist, params ? params->nprobe : ivf.nprobe);
    FAISS_THROW_IF_NOT_MSG(nprobe > 0, "IVF search: nprobe must be > 0");
    return nprobe;
}

std::unique_ptr<InvertedListScanner> servable_scanner(
        const IndexIVF& ivf,
        const SearchParametersIVF* params,
        bool store_pairs,
        bool counts_codes) {
    const IDSelector* sel = params ? params->sel : nullptr;
    const idx_t max_codes = params ? params->max_codes : ivf.max_codes;
    auto selr = dynamic_cast<const IDSelectorRange*>(sel);
    if (counts_codes && max_codes != 0 && selr && selr->assume_sorted) {
        return nullptr;
    }
    try {
        return std::unique_ptr<InvertedListScanner>(
                ivf.get_InvertedListScanner(store_pairs, sel));
    } catch (const FaissException&) {
        return nullptr;
    }
}

bool ccd_requested(const IndexIVF& ivf, const SearchParametersIVF* params) {
    check_parallel_mode(ivf.parallel_mode);
    return (ivf.parallel_mode & PARALLEL_MODE_CCD) != 0 ||
            dynamic_cast<const SearchParametersIVFCCD*>(params) != nullptr;
}

std::mutex& stats_mutex() {
    static std::mutex* m = [] {
        auto* made = new std::mutex();
        hold_across_forks(*made);
        return made;
    }();
    return *m;
}

namespace {

/// check_knobs: SearchParametersIVFCCD's fields, or a FaissException
/// naming the bad one.
void check_knobs(const SearchParametersIVFCCD& shape) {
    FAISS_THROW_IF_NOT_FMT(
            shape.helpers >= -1,
            "SearchParametersIVFCCD: helpers must be -1 (the cost "
            "model decides), 0 or more (got %d)",
            shape.helpers);
    // Finite too: an infinite factor overflowed the chunk sizes' size_t
    // (fuzz_search_params), and split every list.
    FAISS_THROW_IF_NOT_FMT(
            shape.split_factor >= 0 && shape.chunk_factor >= 0 &&
                    std::isfinite(shape.split_factor) &&
                    std::isfinite(shape.chunk_factor),
            "SearchParametersIVFCCD: split_factor (%g) and "
            "chunk_factor (%g) must be finite and >= 0",
            shape.split_factor,
            shape.chunk_factor);
    FAISS_THROW_IF_NOT_FMT(
            shape.table_id >= -1 && shape.table_id < 0xffffffff,
            "SearchParametersIVFCCD: table_id must be -1 (derived "
            "from the index) or 0..0xfffffffe; 0xffffffff is "
            "reserved (got %" PRId64 ")",
            int64_t(shape.table_id));
    FAISS_THROW_IF_NOT_FMT(
            shape.list_major_min_batch >= -1,
            "SearchParametersIVFCCD: list_major_min_batch must be -1 "
            "(the list sizes decide) or >= 0 (got %" PRId64 ")",
            int64_t(shape.list_major_min_batch));
}

/// checked: the call's knobs, checked before anything is resolved from
/// them (a bad one throws before the call enters the pool's callers).
const SearchParametersIVFCCD* checked(const SearchParametersIVF* params) {
    auto ccd = dynamic_cast<const SearchParametersIVFCCD*>(params);
    if (ccd != nullptr) {
        check_knobs(*ccd);
    }
    return ccd;
}

/// call_runtime: where a call's scans run: its SearchParametersIVFCCD's
/// runtime, else the default one, which `held` then keeps alive.
Runtime* call_runtime(
        const SearchParametersIVFCCD* ccd,
        std::shared_ptr<Runtime>& held) {
    if (ccd != nullptr && ccd->runtime != nullptr) {
        return ccd->runtime;
    }
    held = Runtime::get_default();
    return held.get();
}

/// current_call: the calling thread's call in progress (ResolvedCall::
/// Current); only this thread reads or writes it.
thread_local const ResolvedCall* current_call = nullptr;

} // namespace

ResolvedCall::ResolvedCall(
        const IndexIVF& ivf_in,
        const SearchParametersIVF* params_in,
        bool store_pairs_in,
        std::unique_ptr<InvertedListScanner> spare)
        : ivf(ivf_in),
          params(params_in),
          ccd(checked(params_in)),
          shape(ccd ? *ccd : SearchParametersIVFCCD()),
          runtime(call_runtime(ccd, held_)),
          scope(runtime->pool()),
          table_id(
                  ccd && ccd->table_id >= 0 ? uint32_t(ccd->table_id)
                                            : table_id_of(ivf_in)),
          sink(ccd && ccd->traffic_sink ? ccd->traffic_sink
                                        : runtime->traffic_sink()),
          sel(params_in ? params_in->sel : nullptr),
          store_pairs(store_pairs_in),
          nprobe(nprobe_of(ivf_in, params_in)),
          max_codes(params_in ? params_in->max_codes : ivf_in.max_codes),
          spare_(spare.release()) {
    // store_pairs labels are offsets from the start of what a scanner is
    // given: lists are never cut then.
    split_above = chunk_codes = SIZE_MAX;
    if (shape.split_factor > 0 && !store_pairs) {
        const double avg =
                std::max(1.0, double(ivf.ntotal) / double(ivf.nlist));
        // Saturated: a huge (finite) factor means "never cut".
        auto codes = [](double v) {
            return v < 1e19 ? size_t(v) : SIZE_MAX;
        };
        chunk_codes = std::max(
                {size_t(1), shape.min_chunk, codes(shape.chunk_factor * avg)});
        split_above = std::max(chunk_codes, codes(shape.split_factor * avg));
    }
}

ResolvedCall::~ResolvedCall() {
    delete spare_.load(std::memory_order_relaxed);
}

std::unique_ptr<InvertedListScanner> ResolvedCall::scanner() const {
    // relaxed: the spare was made by the calling thread before the call's
    // tasks were submitted, which orders it before any participant.
    if (InvertedListScanner* s =
                spare_.exchange(nullptr, std::memory_order_relaxed)) {
        return std::unique_ptr<InvertedListScanner>(s);
    }
    return std::unique_ptr<InvertedListScanner>(
            ivf.get_InvertedListScanner(store_pairs, sel));
}

int ResolvedCall::other_callers() const {
    return scope.others_now();
}

std::vector<ScanItem> ResolvedCall::items(
        idx_t n,
        const idx_t* keys,
        bool split,
        bool counts_codes) const {
    const idx_t limit = counts_codes ? max_codes : 0;
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
                        {q, list_no, p, begin, std::min(size, begin + step)});
            }
            nscan += idx_t(size);
            if (limit != 0 && nscan >= limit) {
                break;
            }
        }
    }
    return out;
}

bool ResolvedCall::runs_alone(
        double codes,
        int others,
        bool split,
        bool list_major) const {
    if (shape.helpers >= 0) {
        return shape.helpers == 0;
    }
    const Pool& pool = runtime->pool();
    const double alone_ns = codes * ns_per_code(list_major);
    const double handoff_ns = pool.handoff_ns();
    if (!helpers_may_pay(alone_ns, pool.num_workers(), others, handoff_ns)) {
        return true;
    }
    return split &&
            codes * split_scan_ns_per_code(table_id, ivf.code_size) / 2 +
                    handoff_ns >=
            alone_ns;
}

double ResolvedCall::ns_per_code(bool list_major) const {
    const double lm = list_major ? list_major_scan_ns_per_code(table_id) : 0;
    return lm > 0 ? lm : scan_ns_per_code(table_id, ivf.code_size);
}

double ResolvedCall::probed_codes(idx_t n, const idx_t* keys) const {
    double codes = 0;
    for (size_t i = 0; i < size_t(n) * nprobe; i++) {
        if (keys[i] >= 0 && keys[i] < idx_t(ivf.nlist)) {
            codes += double(ivf.invlists->list_size(keys[i]));
        }
    }
    return codes;
}

ShapeChoice ResolvedCall::list_major(idx_t n, double codes) const {
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

void ResolvedCall::add_stats(
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

ResolvedCall::Current::Current(const ResolvedCall& call)
        : saved_(current_call) {
    current_call = &call;
}

ResolvedCall::Current::~Current() {
    current_call = saved_;
}

const ResolvedCall* ResolvedCall::take_current(
        const IndexIVF& ivf,
        const SearchParametersIVF* params,
        bool store_pairs) {
    const ResolvedCall* call = current_call;
    current_call = nullptr;
    if (call != nullptr && &call->ivf == &ivf && call->params == params &&
        call->store_pairs == store_pairs) {
        return call;
    }
    return nullptr;
}

} // namespace ivf
} // namespace ccd
} // namespace faiss
