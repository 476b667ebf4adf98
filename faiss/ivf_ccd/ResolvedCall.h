/**
 * ResolvedCall: one CCD-mode IVF call, resolved once where it enters
 * (faiss/IVFSearchCCD.cpp) and passed down to everything below: the index
 * and its parameters (the SearchParametersIVFCCD knobs checked), the probes,
 * the runtime the scans run on, the table id that keys their tasks, the
 * traffic sink, the call's one Pool::CallerScope, and the scanner factory.
 * Nothing below the entry looks these up again.
 *
 * Thread contract: built and destroyed by the calling thread; const
 * afterwards, and read by every participant of the call at once (scanner()
 * is the one member that hands out state, with an atomic exchange).
 */

#pragma once

#include <faiss/BatchShape.h>
#include <faiss/IVFSearchCCD.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/impl/AuxIndexStructures.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace faiss {
struct InvertedListScanner;

namespace ccd {
namespace ivf {

using idx_t = Index::idx_t;

/// kAutoListMajorMinBatch: the automatic choice of list-major
/// (list_major_min_batch = -1) is priced (BatchShape.h) from this many
/// queries: below it a list's queries are too few to pay list-major's
/// per-item set_query back.
constexpr idx_t kAutoListMajorMinBatch = 64;

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
size_t nprobe_of(const IndexIVF& ivf, const SearchParametersIVF* params);

/// servable_scanner: a scanner for this call when scans as tasks answer it
/// exactly, else nullptr: not with max_codes (which k-NN search counts,
/// and range search ignores) and a sorted IDSelectorRange together (FAISS
/// then counts max_codes over the range's part of each list only, which
/// the scanners do not see), nor without an InvertedListScanner (the
/// FastScan family has none; some indexes throw).
std::unique_ptr<InvertedListScanner> servable_scanner(
        const IndexIVF& ivf,
        const SearchParametersIVF* params,
        bool store_pairs,
        bool counts_codes = true);

/// ccd_requested: the index's mode or the call's parameters ask for the
/// pool. Throws on a mode IndexIVF does not support.
bool ccd_requested(const IndexIVF& ivf, const SearchParametersIVF* params);

/// stats_mutex: IndexIVFStats are plain fields (and indexIVF_stats is a
/// global): concurrent searches add to them, and to ivf_ccd_stats, under
/// this. fork() takes it first, so that a child never finds it held by a
/// parent's search.
std::mutex& stats_mutex();

class ResolvedCall {
   public:
    const IndexIVF& ivf;
    const SearchParametersIVF* params;
    const SearchParametersIVFCCD* ccd; ///< params, if of that type
    SearchParametersIVFCCD shape;      ///< *ccd, or the defaults

   private:
    std::shared_ptr<Runtime> held_; ///< the default runtime, if used

   public:
    Runtime* runtime;
    /// scope: the whole call (quantizer included) is one caller of the
    /// pool: with more concurrent searches than workers, they run in
    /// arrival order under PoolOptions::fifo_callers.
    const Pool::CallerScope scope;
    uint32_t table_id;
    TrafficSink* sink;
    const IDSelector* sel;
    bool store_pairs;
    size_t nprobe;
    idx_t max_codes;
    size_t split_above; ///< lists longer than this are cut...
    size_t chunk_codes; ///< ...into chunks of this many codes (>= 1)

    /// ResolvedCall: checks the SearchParametersIVFCCD knobs (throws a
    /// FaissException naming the bad one). `spare`: a scanner made while
    /// deciding the call is servable, given to its first participant.
    ResolvedCall(
            const IndexIVF& ivf,
            const SearchParametersIVF* params,
            bool store_pairs,
            std::unique_ptr<InvertedListScanner> spare = nullptr);
    ~ResolvedCall();
    ResolvedCall(const ResolvedCall&) = delete;
    ResolvedCall& operator=(const ResolvedCall&) = delete;

    /// scanner: a participant's own scanner (the spare one first). Any
    /// participant thread.
    std::unique_ptr<InvertedListScanner> scanner() const;

    /// other_callers: the pool's active callers besides this one, now.
    int other_callers() const;

    /// items: the scans of a batch, query by query, probe by probe, chunk
    /// by chunk; empty lists and missing probes (-1 keys) are left out, and
    /// a query's probes stop once max_codes codes are reached, as in
    /// IndexIVF::search_preassigned (range search, counts_codes false,
    /// ignores max_codes as FAISS's does).
    std::vector<ScanItem> items(
            idx_t n,
            const idx_t* keys,
            bool split,
            bool counts_codes = true) const;

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
            const;

    /// ns_per_code: the measured scan cost per code of this index in the
    /// given order (list-major's own once measured).
    double ns_per_code(bool list_major) const;

    /// probed_codes: the codes of the batch's probed lists, each counted
    /// whole (max_codes aside).
    double probed_codes(idx_t n, const idx_t* keys) const;

    /// list_major: whether a k-NN batch of n queries over `codes` probed
    /// codes is scanned list-major: from list_major_min_batch queries when
    /// the call sets it, else (-1) from kAutoListMajorMinBatch queries as
    /// BatchShape's choose_list_major takes it, from this index's measured
    /// terms and its history of priced calls.
    ShapeChoice list_major(idx_t n, double codes) const;

    /// add_stats: the call's counters into `stats` (may be null).
    void add_stats(
            IndexIVFStats* stats,
            idx_t n,
            const std::vector<ScanItem>& items,
            size_t nheap) const;

    /// Current: while alive, `call` is the calling thread's call in
    /// progress, for the index's own search_preassigned (virtual: IVFPQR
    /// and IVFFlatDedup do their part around it) to find when it comes back
    /// to ivf_search_preassigned, instead of deciding the call again.
    /// Restores the thread's previous one on destruction.
    class Current {
       public:
        explicit Current(const ResolvedCall& call);
        ~Current();
        Current(const Current&) = delete;
        Current& operator=(const Current&) = delete;

       private:
        const ResolvedCall* saved_;
    };

    /// take_current: the calling thread's call in progress if it is this
    /// one (same index, parameters and store_pairs), else nullptr. Either
    /// way the thread has none afterwards: the first scans to come back
    /// consume it, so a search nested in a wait of this call (a task the
    /// caller helps with) never finds it.
    static const ResolvedCall* take_current(
            const IndexIVF& ivf,
            const SearchParametersIVF* params,
            bool store_pairs);

   private:
    mutable std::atomic<InvertedListScanner*> spare_;
};

} // namespace ivf
} // namespace ccd
} // namespace faiss
