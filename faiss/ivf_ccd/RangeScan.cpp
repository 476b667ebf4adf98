#include <faiss/ivf_ccd/RangeScan.h>

#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/ivf_ccd/ScanShare.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

namespace faiss {
namespace ccd {
namespace ivf {

namespace {

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
    const ResolvedCall& call;
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

} // namespace

void range_scans(
        const ResolvedCall& call,
        idx_t n,
        const float* x,
        float radius,
        const idx_t* keys,
        const float* coarse_dis,
        RangeSearchResult* result,
        IndexIVFStats* stats) {
    FAISS_THROW_IF_NOT_MSG(
            result && result->nq == size_t(n),
            "IVF range search: result is null or its nq differs from n");
    const ScanPlan plan(call, n, keys, /*knn=*/false);
    std::vector<ScanItem> items =
            call.items(n, keys, plan.split(), /*counts_codes=*/false);
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
}

} // namespace ivf
} // namespace ccd
} // namespace faiss
