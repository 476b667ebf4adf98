#include <faiss/IVFSearchCCD.h>

#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQR.h>
#include <faiss/ccd_scheduler/TaskGroup.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/Heap.h>

#include <omp.h>

#include <algorithm>
#include <cinttypes>
#include <memory>
#include <mutex>
#include <vector>

namespace faiss {
namespace ccd {

namespace {

using idx_t = Index::idx_t;

/// QueryLock: guards one query's results while a task merges into them
/// (a k-element merge or an append). Tasks of one query rarely finish at
/// the same instant, so the lock is almost always free: two uncontended
/// atomic operations, the same as a spin lock, without its worst case.
using QueryLock = std::mutex;

/// Chunking: how lists are cut into scans.
struct Chunking {
    size_t threshold; ///< lists longer than this are split
    size_t chunk;     ///< codes per chunk of a split list

    Chunking(const SearchParametersIVFCCD& shape, const IndexIVF& ivf) {
        if (shape.split_factor <= 0) {
            threshold = SIZE_MAX;
            chunk = SIZE_MAX;
            return;
        }
        const double avg = std::max(
                1.0,
                double(ivf.invlists->compute_ntotal()) / ivf.nlist);
        chunk = std::max(shape.min_chunk, size_t(shape.chunk_factor * avg));
        threshold = std::max(chunk, size_t(shape.split_factor * avg));
    }
    size_t chunks_of(size_t list_size) const {
        return list_size <= threshold ? 1 : (list_size + chunk - 1) / chunk;
    }
};

/// ScanItem: codes [begin, end) of list `list_no`, scanned for query q,
/// whose probe of rank p it is.
struct ScanItem {
    idx_t q;
    idx_t list_no;
    size_t p;
    size_t begin;
    size_t end;
};

size_t effective_nprobe(
        const IndexIVF& ivf,
        const SearchParametersIVF* params) {
    const size_t nprobe = params ? params->nprobe : ivf.nprobe;
    // nprobe is a size_t: a negative value set from Python or C wraps
    // around to a huge one, which is as wrong as zero.
    FAISS_THROW_IF_NOT_FMT(
            nprobe > 0 && nprobe <= size_t(1) << 40,
            "IVF search: nprobe must be > 0 (got %zd)",
            ssize_t(nprobe));
    return std::min(nprobe, ivf.nlist);
}

/// scan_items: the scans of a batch, query by query, probe by probe, chunk
/// by chunk; empty lists and missing probes (-1 keys) are left out.
std::vector<ScanItem> scan_items(
        const IndexIVF& ivf,
        const Chunking& chunking,
        idx_t n,
        size_t nprobe,
        const idx_t* keys) {
    std::vector<ScanItem> items;
    items.reserve(size_t(n) * nprobe);
    for (idx_t q = 0; q < n; q++) {
        for (size_t p = 0; p < nprobe; p++) {
            const idx_t list_no = keys[q * nprobe + p];
            if (list_no < 0) {
                continue;
            }
            FAISS_THROW_IF_NOT_FMT(
                    size_t(list_no) < ivf.nlist,
                    "IVF search: list %" PRId64 " out of range (nlist %zd)",
                    int64_t(list_no),
                    ivf.nlist);
            const size_t size = ivf.invlists->list_size(list_no);
            const size_t nchunks = size == 0 ? 0 : chunking.chunks_of(size);
            const size_t chunk = nchunks == 1 ? size : chunking.chunk;
            for (size_t c = 0; c < nchunks; c++) {
                const size_t begin = c * chunk;
                items.push_back(
                        {q, list_no, p, begin, std::min(size, begin + chunk)});
            }
        }
    }
    return items;
}

/// submit_scans: the tasks of a batch. Consecutive items of the same list
/// chunk go into one task, at most `max_items` of them; so a task touches
/// one list, and reports its traffic once. `body(first, last)` scans the
/// items of one task with one scanner.
template <class Body>
void submit_scans(
        TaskGroup& group,
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const std::vector<ScanItem>& items,
        size_t max_items,
        const Body& body) {
    const size_t bytes_per_code = ivf.code_size + sizeof(idx_t);
    for (size_t b = 0; b < items.size();) {
        size_t e = b + 1;
        while (e < items.size() && e - b < max_items &&
               items[e].list_no == items[b].list_no &&
               items[e].begin == items[b].begin) {
            e++;
        }
        const ScanItem* first = items.data() + b;
        const ScanItem* last = items.data() + e;
        const MappingId id =
                make_mapping_id(target.table_id, uint32_t(first->list_no));
        group.submit(id, [&body, first, last, id, &target, bytes_per_code] {
            body(first, last);
            if (target.sink != nullptr) {
                size_t codes = 0;
                for (const ScanItem* it = first; it != last; it++) {
                    codes += it->end - it->begin;
                }
                target.sink->record(id, codes, codes * bytes_per_code);
            }
        });
        b = e;
    }
}

// Queries per list-major task: enough to amortise the list's trip into
// cache, few enough that a hot list still spreads over its CCD's cores.
constexpr size_t kQueriesPerListTask = 32;

/// run_scans: submit the batch's scans, query-major or list-major, and
/// wait. List-major orders the items by list chunk (stable: by query
/// within one).
template <class Body>
void run_scans(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        bool list_major,
        std::vector<ScanItem>& items,
        const Body& body) {
    size_t max_items = 1;
    if (list_major) {
        std::stable_sort(
                items.begin(),
                items.end(),
                [](const ScanItem& a, const ScanItem& b) {
                    return a.list_no != b.list_no ? a.list_no < b.list_no
                                                  : a.begin < b.begin;
                });
        max_items = kQueriesPerListTask;
    }
    TaskGroup group(*target.pool);
    submit_scans(group, ivf, target, items, max_items, body);
    group.wait();
}

/// KnnScan: the body of k-NN scan tasks.
template <class C>
struct KnnScan {
    const IndexIVF& ivf;
    const float* x;
    idx_t k;
    size_t nprobe;
    const float* coarse_dis;
    float* distances;
    idx_t* labels;
    QueryLock* locks;

    void operator()(const ScanItem* first, const ScanItem* last) const {
        std::unique_ptr<InvertedListScanner> scanner(
                ivf.get_InvertedListScanner(false));
        std::vector<float> local_dis(k);
        std::vector<idx_t> local_ids(k);
        for (const ScanItem* it = first; it != last; it++) {
            scan(*scanner, *it, local_dis.data(), local_ids.data());
        }
    }

    void scan(
            InvertedListScanner& scanner,
            const ScanItem& item,
            float* local_dis,
            idx_t* local_ids) const {
        const InvertedLists* il = ivf.invlists;
        scanner.set_query(x + item.q * ivf.d);
        scanner.set_list(item.list_no, coarse_dis[item.q * nprobe + item.p]);
        InvertedLists::ScopedCodes codes(il, item.list_no);
        InvertedLists::ScopedIds ids(il, item.list_no);
        // Seed the local heap with the query's current k-th distance: a
        // code that cannot beat it can never reach the answer (that bound
        // only tightens), so the scanner rejects it at once instead of
        // filling a fresh heap. Without the seed, per-task heaps cost
        // 21-36% more scan time than one heap per query (bench_ivf, "scan
        // cost on one thread").
        float* dis = distances + item.q * k;
        idx_t* lab = labels + item.q * k;
        QueryLock& lock = locks[item.q];
        float bound;
        {
            std::lock_guard<QueryLock> guard(lock);
            bound = dis[0];
        }
        std::fill(local_dis, local_dis + k, bound);
        std::fill(local_ids, local_ids + k, idx_t(-1));
        scanner.scan_codes(
                item.end - item.begin,
                codes.get() + item.begin * il->code_size,
                ids.get() + item.begin,
                local_dis,
                local_ids,
                k);
        std::lock_guard<QueryLock> guard(lock);
        for (idx_t j = 0; j < k; j++) {
            if (local_ids[j] != -1 && C::cmp(dis[0], local_dis[j])) {
                heap_replace_top<C>(k, dis, lab, local_dis[j], local_ids[j]);
            }
        }
    }
};

/// QueryHits: one query's range results, appended under its lock.
struct QueryHits {
    QueryLock lock;
    std::vector<float> dis;
    std::vector<idx_t> ids;
};

/// RangeScan: the body of range scan tasks.
struct RangeScan {
    const IndexIVF& ivf;
    const float* x;
    float radius;
    size_t nprobe;
    const float* coarse_dis;
    QueryHits* hits;

    void operator()(const ScanItem* first, const ScanItem* last) const {
        std::unique_ptr<InvertedListScanner> scanner(
                ivf.get_InvertedListScanner(false));
        for (const ScanItem* it = first; it != last; it++) {
            scan(*scanner, *it);
        }
    }

    void scan(InvertedListScanner& scanner, const ScanItem& item) const {
        const InvertedLists* il = ivf.invlists;
        scanner.set_query(x + item.q * ivf.d);
        scanner.set_list(item.list_no, coarse_dis[item.q * nprobe + item.p]);
        InvertedLists::ScopedCodes codes(il, item.list_no);
        InvertedLists::ScopedIds ids(il, item.list_no);
        // FAISS's range scanners report through a partial result: a
        // private one per scan.
        RangeSearchResult proto(1);
        proto.buffer_size = 1024;
        RangeSearchPartialResult pres(&proto);
        RangeQueryResult& qres = pres.new_result(item.q);
        scanner.scan_codes_range(
                item.end - item.begin,
                codes.get() + item.begin * il->code_size,
                ids.get() + item.begin,
                radius,
                qres);
        QueryHits& h = hits[item.q];
        std::lock_guard<QueryLock> guard(h.lock);
        for (size_t b = 0; b < pres.buffers.size(); b++) {
            const size_t nb =
                    b + 1 == pres.buffers.size() ? pres.wp : pres.buffer_size;
            const auto& buffer = pres.buffers[b];
            h.dis.insert(h.dis.end(), buffer.dis, buffer.dis + nb);
            h.ids.insert(h.ids.end(), buffer.ids, buffer.ids + nb);
        }
    }
};

template <class C>
void knn_search(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        idx_t n,
        const float* x,
        idx_t k,
        size_t nprobe,
        const idx_t* keys,
        const float* coarse_dis,
        float* distances,
        idx_t* labels) {
    for (idx_t q = 0; q < n; q++) {
        heap_heapify<C>(k, distances + q * k, labels + q * k);
    }
    std::vector<ScanItem> items =
            scan_items(ivf, Chunking(shape, ivf), n, nprobe, keys);
    std::unique_ptr<QueryLock[]> locks(new QueryLock[n]);
    const KnnScan<C>
            body{ivf, x, k, nprobe, coarse_dis, distances, labels, locks.get()};
    run_scans(ivf, target, n >= shape.list_major_min_batch, items, body);
    for (idx_t q = 0; q < n; q++) {
        heap_reorder<C>(k, distances + q * k, labels + q * k);
    }
}

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

/// CoarseAssignment: the nprobe nearest lists of every query of a batch.
struct CoarseAssignment {
    std::vector<idx_t> keys;
    std::vector<float> dis;

    CoarseAssignment(
            const IndexIVF& ivf,
            idx_t n,
            const float* x,
            size_t nprobe,
            const SearchParametersIVF* params)
            : keys(n * nprobe), dis(n * nprobe) {
        // One call for the whole batch, exactly as IndexIVF::search does
        // it: the coarse distances feed the scanners of residual codecs
        // (IVFPQ), so any other blocking of the batch would change the
        // last bits of the results.
        OmpOneThread one;
        ivf.quantizer->search(
                n,
                x,
                nprobe,
                dis.data(),
                keys.data(),
                params ? params->quantizer_params : nullptr);
    }
};

} // namespace

bool ccd_supports_index(const IndexIVF& ivf) {
    // These have scanners but search_preassigned overrides of their own:
    // scanning lists would skip the re-ranking or the duplicates.
    if (dynamic_cast<const IndexIVFPQR*>(&ivf) ||
        dynamic_cast<const IndexIVFFlatDedup*>(&ivf)) {
        return false;
    }
    try {
        std::unique_ptr<InvertedListScanner> probe(
                ivf.get_InvertedListScanner(false));
        return probe != nullptr;
    } catch (const FaissException&) {
        return false; // e.g. the FastScan family
    }
}

bool ccd_supports_params(
        const IndexIVF& ivf,
        const SearchParametersIVF* params) {
    return ivf.max_codes == 0 &&
            !(params && (params->sel != nullptr || params->max_codes != 0));
}

void search_ccd(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        idx_t n,
        const float* x,
        idx_t k,
        float* distances,
        idx_t* labels,
        const SearchParametersIVF* params) {
    FAISS_THROW_IF_NOT_MSG(k > 0, "IVF search: k must be > 0");
    const CoarseAssignment coarse(
            ivf,
            n,
            x,
            effective_nprobe(ivf, params),
            params);
    search_preassigned_ccd(
            ivf,
            target,
            shape,
            n,
            x,
            k,
            coarse.keys.data(),
            coarse.dis.data(),
            distances,
            labels,
            params);
}

void range_search_ccd(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        idx_t n,
        const float* x,
        float radius,
        RangeSearchResult* result,
        const SearchParametersIVF* params) {
    const CoarseAssignment coarse(
            ivf,
            n,
            x,
            effective_nprobe(ivf, params),
            params);
    range_search_preassigned_ccd(
            ivf,
            target,
            shape,
            n,
            x,
            radius,
            coarse.keys.data(),
            coarse.dis.data(),
            result,
            params);
}

void search_preassigned_ccd(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        idx_t n,
        const float* x,
        idx_t k,
        const idx_t* keys,
        const float* coarse_dis,
        float* distances,
        idx_t* labels,
        const SearchParametersIVF* params) {
    FAISS_THROW_IF_NOT_MSG(k > 0, "IVF search: k must be > 0");
    const size_t nprobe = effective_nprobe(ivf, params);
    if (ivf.metric_type == METRIC_INNER_PRODUCT) {
        knn_search<CMin<float, idx_t>>(
                ivf,
                target,
                shape,
                n,
                x,
                k,
                nprobe,
                keys,
                coarse_dis,
                distances,
                labels);
    } else {
        knn_search<CMax<float, idx_t>>(
                ivf,
                target,
                shape,
                n,
                x,
                k,
                nprobe,
                keys,
                coarse_dis,
                distances,
                labels);
    }
}

void range_search_preassigned_ccd(
        const IndexIVF& ivf,
        const IVFScanTarget& target,
        const SearchParametersIVFCCD& shape,
        idx_t n,
        const float* x,
        float radius,
        const idx_t* keys,
        const float* coarse_dis,
        RangeSearchResult* result,
        const SearchParametersIVF* params) {
    FAISS_THROW_IF_NOT_MSG(
            result && result->nq == size_t(n),
            "IVF range search: result is null or its nq differs from n");
    const size_t nprobe = effective_nprobe(ivf, params);
    std::vector<ScanItem> items =
            scan_items(ivf, Chunking(shape, ivf), n, nprobe, keys);
    std::vector<QueryHits> hits(n);
    const RangeScan body{ivf, x, radius, nprobe, coarse_dis, hits.data()};
    // Query-major always, as before list-major existed: no measurement yet
    // says range batches gain from it. Hits come in task completion order.
    run_scans(ivf, target, false, items, body);

    for (idx_t q = 0; q < n; q++) {
        result->lims[q] = hits[q].ids.size();
    }
    result->do_allocation();
    for (idx_t q = 0; q < n; q++) {
        std::copy(
                hits[q].dis.begin(),
                hits[q].dis.end(),
                result->distances + result->lims[q]);
        std::copy(
                hits[q].ids.begin(),
                hits[q].ids.end(),
                result->labels + result->lims[q]);
    }
}

} // namespace ccd
} // namespace faiss
