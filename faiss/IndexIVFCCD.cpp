#include <faiss/IndexIVFCCD.h>

#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQR.h>

#include <faiss/ccd_scheduler/Futex.h>
#include <faiss/ccd_scheduler/TaskGroup.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/Heap.h>
#include <faiss/utils/distances.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <vector>

namespace faiss {
namespace ccd {

namespace {

using idx_t = Index::idx_t;

/// QueryLock: guards one query's result heap while a scan task merges into
/// it. Critical sections are a k-element merge, so a spin lock; its own
/// cache line is not worth it at one lock per query.
struct QueryLock {
    std::atomic<bool> held{false};
    void lock() {
        // acquire: the merge sees the previous holder's heap writes.
        while (held.exchange(true, std::memory_order_acquire)) {
            while (held.load(std::memory_order_relaxed)) {
                detail::cpu_relax();
            }
        }
    }
    void unlock() {
        held.store(false, std::memory_order_release);
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

/// Chunking: how lists are cut into scan tasks.
struct Chunking {
    size_t threshold; ///< lists longer than this are split
    size_t chunk;     ///< codes per chunk of a split list

    Chunking(const IndexIVFCCD& ccd, const IndexIVF& ivf) {
        const double avg = std::max(
                1.0, double(ivf.invlists->compute_ntotal()) / ivf.nlist);
        if (ccd.split_factor <= 0) {
            threshold = SIZE_MAX;
            chunk = SIZE_MAX;
            return;
        }
        chunk = std::max(ccd.min_chunk, size_t(ccd.chunk_factor * avg));
        threshold = std::max(chunk, size_t(ccd.split_factor * avg));
    }
    size_t chunks_of(size_t list_size) const {
        return list_size <= threshold ? 1 : (list_size + chunk - 1) / chunk;
    }
};

/// ScanContext: what every scan task of one search call shares.
struct ScanContext {
    const IndexIVF* ivf;
    const IndexIVFCCD* ccd;
    const float* x;
    idx_t k;
    size_t nprobe;
    const idx_t* assign;
    const float* coarse_dis;
    float* distances;
    idx_t* labels;
    QueryLock* locks;
    Chunking chunking;
    size_t bytes_per_code;
};

/// merge_into_query: fold a task's local heap into query q's heap.
template <class C>
void merge_into_query(
        const ScanContext& s,
        idx_t q,
        const float* local_dis,
        const idx_t* local_ids) {
    float* dis = s.distances + q * s.k;
    idx_t* ids = s.labels + q * s.k;
    s.locks[q].lock();
    for (idx_t j = 0; j < s.k; j++) {
        if (local_ids[j] != -1 && C::cmp(dis[0], local_dis[j])) {
            heap_replace_top<C>(s.k, dis, ids, local_dis[j], local_ids[j]);
        }
    }
    s.locks[q].unlock();
}

/// query_bound: the k-th best distance query q has so far.
template <class C>
float query_bound(const ScanContext& s, idx_t q) {
    s.locks[q].lock();
    const float bound = s.distances[q * s.k];
    s.locks[q].unlock();
    return bound;
}

/// scan_range: scan codes [begin, end) of list `list_no` for query q (probe
/// rank `p`) into the local heap, and merge it.
template <class C>
void scan_range(
        const ScanContext& s,
        InvertedListScanner& scanner,
        idx_t q,
        size_t p,
        idx_t list_no,
        size_t begin,
        size_t end,
        float* local_dis,
        idx_t* local_ids) {
    const InvertedLists* il = s.ivf->invlists;
    scanner.set_query(s.x + q * s.ivf->d);
    scanner.set_list(list_no, s.coarse_dis[q * s.nprobe + p]);
    InvertedLists::ScopedCodes codes(il, list_no);
    InvertedLists::ScopedIds ids(il, list_no);
    // Seed the local heap with the query's current k-th distance: a code
    // that cannot beat it can never reach the answer (that bound only
    // tightens), so the scanner rejects it at once instead of filling a
    // fresh heap. Without the seed, per-task heaps cost 21-36% more scan
    // time than one heap per query (bench_ivf, "scan cost on one thread").
    const float bound = query_bound<C>(s, q);
    for (idx_t j = 0; j < s.k; j++) {
        local_dis[j] = bound;
        local_ids[j] = -1;
    }
    scanner.scan_codes(
            end - begin,
            codes.get() + begin * il->code_size,
            ids.get() + begin,
            local_dis,
            local_ids,
            s.k);
    merge_into_query<C>(s, q, local_dis, local_ids);
}

void record_traffic(const ScanContext& s, idx_t list_no, size_t n_codes) {
    if (s.ccd->traffic_sink != nullptr) {
        s.ccd->traffic_sink->record(
                make_mapping_id(s.ccd->table_id, uint32_t(list_no)),
                n_codes,
                n_codes * s.bytes_per_code);
    }
}

/// search_query_major: one task per (query, probed list, chunk).
template <class C>
void search_query_major(const ScanContext& s, idx_t n, TaskGroup& group) {
    const InvertedLists* il = s.ivf->invlists;
    for (idx_t q = 0; q < n; q++) {
        for (size_t p = 0; p < s.nprobe; p++) {
            const idx_t list_no = s.assign[q * s.nprobe + p];
            if (list_no < 0) {
                continue;
            }
            const size_t size = il->list_size(list_no);
            if (size == 0) {
                continue;
            }
            const size_t nchunks = s.chunking.chunks_of(size);
            const size_t chunk = nchunks == 1 ? size : s.chunking.chunk;
            for (size_t c = 0; c < nchunks; c++) {
                const size_t begin = c * chunk;
                const size_t end = std::min(size, begin + chunk);
                group.submit(
                        make_mapping_id(s.ccd->table_id, uint32_t(list_no)),
                        [&s, q, p, list_no, begin, end] {
                            std::unique_ptr<InvertedListScanner> scanner(
                                    s.ivf->get_InvertedListScanner(false));
                            std::vector<float> dis(s.k);
                            std::vector<idx_t> ids(s.k);
                            scan_range<C>(
                                    s, *scanner, q, p, list_no, begin, end,
                                    dis.data(), ids.data());
                            record_traffic(s, list_no, end - begin);
                        });
            }
        }
    }
}

/// search_list_major: one task per (probed list, chunk, group of queries):
/// the list is scanned for every query of the batch that probes it while
/// its codes are in cache.
template <class C>
void search_list_major(const ScanContext& s, idx_t n, TaskGroup& group) {
    const InvertedLists* il = s.ivf->invlists;
    const size_t nlist = s.ivf->nlist;
    // Bucket the (query, probe) pairs by list: counting sort.
    std::vector<size_t> start(nlist + 1, 0);
    for (idx_t i = 0; i < n * idx_t(s.nprobe); i++) {
        if (s.assign[i] >= 0) {
            start[s.assign[i] + 1]++;
        }
    }
    for (size_t l = 0; l < nlist; l++) {
        start[l + 1] += start[l];
    }
    auto pairs = std::make_shared<std::vector<idx_t>>(start[nlist]);
    {
        std::vector<size_t> fill(start.begin(), start.end() - 1);
        for (idx_t i = 0; i < n * idx_t(s.nprobe); i++) {
            if (s.assign[i] >= 0) {
                (*pairs)[fill[s.assign[i]]++] = i;
            }
        }
    }
    // Queries per task: enough to amortise the list's trip into cache,
    // few enough that a hot list still spreads over its CCD's cores.
    const size_t kQueriesPerTask = 32;
    for (size_t l = 0; l < nlist; l++) {
        const size_t m = start[l + 1] - start[l];
        const size_t size = m == 0 ? 0 : il->list_size(l);
        if (size == 0) {
            continue;
        }
        const size_t nchunks = s.chunking.chunks_of(size);
        const size_t chunk = nchunks == 1 ? size : s.chunking.chunk;
        for (size_t c = 0; c < nchunks; c++) {
            const size_t begin = c * chunk;
            const size_t end = std::min(size, begin + chunk);
            for (size_t g = start[l]; g < start[l + 1]; g += kQueriesPerTask) {
                const size_t g_end = std::min(start[l + 1], g + kQueriesPerTask);
                group.submit(
                        make_mapping_id(s.ccd->table_id, uint32_t(l)),
                        [&s, pairs, l, begin, end, g, g_end] {
                            std::unique_ptr<InvertedListScanner> scanner(
                                    s.ivf->get_InvertedListScanner(false));
                            std::vector<float> dis(s.k);
                            std::vector<idx_t> ids(s.k);
                            for (size_t e = g; e < g_end; e++) {
                                const idx_t pair = (*pairs)[e];
                                scan_range<C>(
                                        s, *scanner, pair / idx_t(s.nprobe),
                                        size_t(pair % idx_t(s.nprobe)),
                                        idx_t(l), begin, end,
                                        dis.data(), ids.data());
                            }
                            record_traffic(s, idx_t(l), (end - begin) * (g_end - g));
                        });
            }
        }
    }
}

template <class C>
void run_search(const ScanContext& s, idx_t n, Pool& pool) {
    for (idx_t q = 0; q < n; q++) {
        heap_heapify<C>(s.k, s.distances + q * s.k, s.labels + q * s.k);
    }
    TaskGroup group(pool);
    if (n >= s.ccd->list_major_min_batch) {
        search_list_major<C>(s, n, group);
    } else {
        search_query_major<C>(s, n, group);
    }
    group.wait();
    for (idx_t q = 0; q < n; q++) {
        heap_reorder<C>(s.k, s.distances + q * s.k, s.labels + q * s.k);
    }
}

} // namespace

IndexIVFCCD::IndexIVFCCD(
        IndexIVF* index_in,
        std::shared_ptr<Pool> pool,
        uint32_t table_id_in,
        bool own_fields_in)
        : Index(index_in ? index_in->d : 0,
                index_in ? index_in->metric_type : METRIC_L2),
          index(index_in),
          own_fields(own_fields_in),
          table_id(table_id_in),
          pool_(pool) {
    FAISS_THROW_IF_NOT_MSG(index_in, "IndexIVFCCD: index is null");
    FAISS_THROW_IF_NOT_MSG(pool, "IndexIVFCCD: pool is null");
    FAISS_THROW_IF_NOT_MSG(
            table_id_in != table_of(kLocalMappingId),
            "IndexIVFCCD: table id 0xffffffff is reserved");
    try {
        std::unique_ptr<InvertedListScanner> probe(
                index_in->get_InvertedListScanner(false));
        has_scanner_ = probe != nullptr;
    } catch (const FaissException&) {
        has_scanner_ = false; // e.g. the FastScan family
    }
    // These have scanners but search_preassigned overrides of their own
    // (IVFPQR re-ranks with its refinement codes, IVFFlatDedup adds the
    // duplicates of each hit): scanning lists would skip that.
    if (dynamic_cast<IndexIVFPQR*>(index_in) ||
        dynamic_cast<IndexIVFFlatDedup*>(index_in)) {
        has_scanner_ = false;
    }
    sync_from_index();
}

IndexIVFCCD::~IndexIVFCCD() {
    if (own_fields) {
        delete index;
    }
}

std::shared_ptr<Pool> IndexIVFCCD::pool() const {
    std::shared_ptr<Pool> p = pool_.lock();
    FAISS_THROW_IF_NOT_MSG(p, "IndexIVFCCD: the pool is gone");
    return p;
}

void IndexIVFCCD::sync_from_index() {
    ntotal = index->ntotal;
    is_trained = index->is_trained;
    metric_type = index->metric_type;
    metric_arg = index->metric_arg;
}

size_t IndexIVFCCD::effective_nprobe(const SearchParameters* params) const {
    size_t nprobe = index->nprobe;
    if (params) {
        auto ivf_params = dynamic_cast<const SearchParametersIVF*>(params);
        FAISS_THROW_IF_NOT_MSG(
                ivf_params, "IndexIVFCCD params have incorrect type");
        nprobe = ivf_params->nprobe;
    }
    // nprobe is a size_t: a negative value set from Python or C wraps
    // around to a huge one, which is as wrong as zero.
    FAISS_THROW_IF_NOT_FMT(
            nprobe > 0 && nprobe <= size_t(1) << 40,
            "IndexIVFCCD: nprobe must be > 0 (got %zd)",
            ssize_t(nprobe));
    return std::min(nprobe, index->nlist);
}

bool IndexIVFCCD::must_fall_back(const SearchParameters* params) const {
    // An empty index: FAISS's own answer (-1 labels), nothing to schedule.
    if (!has_scanner_ || index->max_codes != 0 || index->ntotal == 0) {
        return true;
    }
    if (params) {
        if (params->sel != nullptr) {
            return true;
        }
        auto ivf_params = dynamic_cast<const SearchParametersIVF*>(params);
        return ivf_params && ivf_params->max_codes != 0;
    }
    return false;
}

void IndexIVFCCD::coarse_quantize(
        idx_t n,
        const float* x,
        size_t nprobe,
        float* coarse_dis,
        idx_t* assign) const {
    // One call for the whole batch, in the calling thread, exactly as
    // IndexIVF::search does it: the coarse distances feed the scanners of
    // residual codecs (IVFPQ), so any other blocking of the batch would
    // change the last bits of the results. OpenMP is held to one thread
    // so concurrent clients do not each start a team.
    OmpOneThread one;
    index->quantizer->search(n, x, nprobe, coarse_dis, assign);
}

void IndexIVFCCD::search(
        idx_t n,
        const float* x,
        idx_t k,
        float* distances,
        idx_t* labels,
        const SearchParameters* params) const {
    FAISS_THROW_IF_NOT_MSG(n >= 0, "IndexIVFCCD::search: n must be >= 0");
    FAISS_THROW_IF_NOT_MSG(k > 0, "IndexIVFCCD::search: k must be > 0");
    FAISS_THROW_IF_NOT_MSG(
            n == 0 || (x && distances && labels),
            "IndexIVFCCD::search: null x, distances or labels with n > 0");
    FAISS_THROW_IF_NOT_MSG(
            index->is_trained, "IndexIVFCCD::search: index is not trained");
    FAISS_THROW_IF_NOT_FMT(
            index->d == d,
            "IndexIVFCCD::search: wrapped index has d=%d, expected %d",
            int(index->d),
            int(d));
    const size_t nprobe = effective_nprobe(params);
    std::shared_ptr<Pool> p = pool();
    if (n == 0) {
        return;
    }
    if (must_fall_back(params)) {
        index->search(n, x, k, distances, labels, params);
        return;
    }

    std::vector<idx_t> assign(n * nprobe);
    std::vector<float> coarse_dis(n * nprobe);
    coarse_quantize(n, x, nprobe, coarse_dis.data(), assign.data());

    std::unique_ptr<QueryLock[]> locks(new QueryLock[n]);
    ScanContext s{
            index,
            this,
            x,
            k,
            nprobe,
            assign.data(),
            coarse_dis.data(),
            distances,
            labels,
            locks.get(),
            Chunking(*this, *index),
            index->code_size + sizeof(idx_t)};
    if (metric_type == METRIC_INNER_PRODUCT) {
        run_search<CMin<float, idx_t>>(s, n, *p);
    } else {
        run_search<CMax<float, idx_t>>(s, n, *p);
    }
}

void IndexIVFCCD::range_search(
        idx_t n,
        const float* x,
        float radius,
        RangeSearchResult* result,
        const SearchParameters* params) const {
    FAISS_THROW_IF_NOT_MSG(n >= 0, "IndexIVFCCD::range_search: n must be >= 0");
    FAISS_THROW_IF_NOT_MSG(
            result, "IndexIVFCCD::range_search: result is null");
    FAISS_THROW_IF_NOT_MSG(
            n == 0 || x, "IndexIVFCCD::range_search: null x with n > 0");
    FAISS_THROW_IF_NOT_MSG(
            result->nq == size_t(n),
            "IndexIVFCCD::range_search: result->nq differs from n");
    FAISS_THROW_IF_NOT_MSG(
            index->is_trained,
            "IndexIVFCCD::range_search: index is not trained");
    const size_t nprobe = effective_nprobe(params);
    std::shared_ptr<Pool> p = pool();
    if (must_fall_back(params)) {
        index->range_search(n, x, radius, result, params);
        return;
    }
    std::vector<idx_t> assign(n * nprobe);
    std::vector<float> coarse_dis(n * nprobe);
    coarse_quantize(n, x, nprobe, coarse_dis.data(), assign.data());

    // Per query: the (distance, label) pairs found, appended under its lock.
    struct Hits {
        QueryLock lock;
        std::vector<float> dis;
        std::vector<idx_t> ids;
    };
    std::vector<Hits> hits(n);
    const InvertedLists* il = index->invlists;
    const IndexIVF* ivf = index;
    const Chunking chunking(*this, *index);
    const size_t bytes_per_code = index->code_size + sizeof(idx_t);
    {
        TaskGroup group(*p);
        for (idx_t q = 0; q < n; q++) {
            for (size_t pr = 0; pr < nprobe; pr++) {
                const idx_t list_no = assign[q * nprobe + pr];
                const size_t size = list_no < 0 ? 0 : il->list_size(list_no);
                if (size == 0) {
                    continue;
                }
                const size_t nchunks = chunking.chunks_of(size);
                const size_t chunk = nchunks == 1 ? size : chunking.chunk;
                const float cdis = coarse_dis[q * nprobe + pr];
                for (size_t c = 0; c < nchunks; c++) {
                    const size_t begin = c * chunk;
                    const size_t end = std::min(size, begin + chunk);
                    group.submit(
                            make_mapping_id(table_id, uint32_t(list_no)),
                            [=, &hits] {
                                std::unique_ptr<InvertedListScanner> scanner(
                                        ivf->get_InvertedListScanner(false));
                                scanner->set_query(x + q * ivf->d);
                                scanner->set_list(list_no, cdis);
                                InvertedLists::ScopedCodes codes(il, list_no);
                                InvertedLists::ScopedIds ids(il, list_no);
                                // A private partial result: FAISS's range
                                // scanners report through one.
                                RangeSearchResult proto(1);
                                proto.buffer_size = 1024;
                                RangeSearchPartialResult pres(&proto);
                                RangeQueryResult& qres = pres.new_result(q);
                                scanner->scan_codes_range(
                                        end - begin,
                                        codes.get() + begin * il->code_size,
                                        ids.get() + begin,
                                        radius,
                                        qres);
                                Hits& h = hits[q];
                                h.lock.lock();
                                for (size_t b = 0; b < pres.buffers.size(); b++) {
                                    const size_t nb = b + 1 == pres.buffers.size()
                                            ? pres.wp
                                            : pres.buffer_size;
                                    h.dis.insert(h.dis.end(),
                                                 pres.buffers[b].dis,
                                                 pres.buffers[b].dis + nb);
                                    h.ids.insert(h.ids.end(),
                                                 pres.buffers[b].ids,
                                                 pres.buffers[b].ids + nb);
                                }
                                h.lock.unlock();
                                if (traffic_sink != nullptr) {
                                    traffic_sink->record(
                                            make_mapping_id(table_id, uint32_t(list_no)),
                                            end - begin,
                                            (end - begin) * bytes_per_code);
                                }
                            });
                }
            }
        }
        group.wait();
    }
    for (idx_t q = 0; q < n; q++) {
        result->lims[q] = hits[q].ids.size();
    }
    result->do_allocation();
    for (idx_t q = 0; q < n; q++) {
        std::copy(hits[q].dis.begin(), hits[q].dis.end(),
                  result->distances + result->lims[q]);
        std::copy(hits[q].ids.begin(), hits[q].ids.end(),
                  result->labels + result->lims[q]);
    }
}

void IndexIVFCCD::train(idx_t n, const float* x) {
    index->train(n, x);
    sync_from_index();
}

void IndexIVFCCD::add(idx_t n, const float* x) {
    index->add(n, x);
    sync_from_index();
}

void IndexIVFCCD::add_with_ids(idx_t n, const float* x, const idx_t* xids) {
    index->add_with_ids(n, x, xids);
    sync_from_index();
}

void IndexIVFCCD::reset() {
    index->reset();
    sync_from_index();
}

void IndexIVFCCD::reconstruct(idx_t key, float* recons) const {
    index->reconstruct(key, recons);
}

} // namespace ccd
} // namespace faiss
