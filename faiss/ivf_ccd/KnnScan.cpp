#include <faiss/ivf_ccd/KnnScan.h>

#include <faiss/IVFScanCost.h>
#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/ivf_ccd/ScanShare.h>
#include <faiss/utils/Heap.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace faiss {
namespace ccd {
namespace ivf {

namespace {

/// QueryLock: guards one query's heap while a task merges into it (k
/// elements). Tasks of one query rarely finish at the same instant, so the
/// lock is almost always free: two uncontended atomic operations, the same
/// as a spin lock, without its worst case.
using QueryLock = std::mutex;

/// KnnScan: the body of k-NN scan tasks.
template <class C>
struct KnnScan {
    const ResolvedCall& call;
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
        // filling a fresh heap: without a seed, a heap per task would
        // admit (and then merge) codes one heap per query never keeps.
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
        // tens of codes) then fill and merge tens of slots, not k, which
        // a single query's many small items would otherwise pay each.
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
        const ResolvedCall& call,
        idx_t n,
        const float* x,
        const idx_t* keys,
        const float* coarse_dis) {
    if (call.shape.list_major_min_batch >= 0 || n < kAutoListMajorMinBatch ||
        has_setup_terms(call.table_id)) {
        return;
    }
    // Its own scanner: the call's spare (ResolvedCall::scanner) is for its
    // first participant.
    std::unique_ptr<InvertedListScanner> scanner(
            call.ivf.get_InvertedListScanner(call.store_pairs, call.sel));
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
        const ResolvedCall& call,
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
// items, the plan and the locks of one slice at a time: a whole large
// batch's items at once are tens of MB, which glibc keeps in the heap
// after the call; a slice is about 5 MB, and still thousands of queries,
// as wide as any plan gets.
constexpr size_t kSliceItems = size_t(1) << 17;

/// knn_scans_of: knn_scans for one heap order C.
template <class C>
void knn_scans_of(
        const ResolvedCall& call,
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

} // namespace

void knn_scans(
        const ResolvedCall& call,
        idx_t n,
        const float* x,
        idx_t k,
        const idx_t* keys,
        const float* coarse_dis,
        float* distances,
        idx_t* labels,
        IndexIVFStats* stats) {
    if (call.ivf.metric_type == METRIC_INNER_PRODUCT) {
        knn_scans_of<CMin<float, idx_t>>(
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
        knn_scans_of<CMax<float, idx_t>>(
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
}

} // namespace ivf
} // namespace ccd
} // namespace faiss
