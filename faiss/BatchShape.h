/**
 * BatchShape: the order in which a CCD-mode k-NN batch scans its (query,
 * list) items, priced from measured costs. Pure: no threads, clock or
 * pool; the tests call it as the search does.
 *
 * Query-major runs a query's probes one after another: a participant
 * calls set_query once per query. List-major runs a list's queries one
 * after another: the list stays in cache for every query after the first,
 * but a participant's scanner then changes query at every item, so it
 * calls set_query once per item. For PQ that set-up (the query's distance
 * tables) is a large part of the work, and a shape chosen on list sizes
 * alone ran PQ batches several times slower than FAISS's own loop.
 * The cheaper shape is taken:
 *
 *   query_major = codes * code_ns
 *   list_major  = codes * code_list_major_ns              (measured)
 *               | query_major + (items - queries) * set_query
 *                 - codes * saved                          (before that)
 *
 * code_ns and code_list_major_ns are what whole units of each shape took
 * per code on this index, so every cost of the shape is in them: set_query
 * and set_list calls, scans, seeding and merging heaps, and the cache
 * traffic between them, which no part timed alone shows. Before
 * list-major ever ran on an index, its price is query-major's plus the
 * set_query calls it adds, less what reading each code from cache instead
 * of memory saves: nothing when the probed lists average less than
 * kListReuseMinBytes (they stay in L1/L2 between a query's neighbours
 * anyway, and list-major then only adds set_query calls), else
 * kReuseSavedNsPerByte per byte of code, at most kReuseMaxSaving of
 * code_ns. Flat codes (memory-bound) save much of their cost that way, the
 * more the larger the lists; PQ codes (their cost in table look-ups) save
 * little, which the extra set_query calls outweigh. The constants are
 * first choices from measurements on a 2-core machine, not tuned.
 *
 * The coarse assignment is shared too, so that a batch of 4,000 queries
 * does not quantize on one core while mode 0 quantizes on all of them,
 * where the index allows a cut (its
 * distances do not carry the coarse distances, whose last bits the BLAS
 * kernels round by the call's size). Every slice but the last is a whole
 * number of `align` queries (at least FAISS's BLAS threshold, so no slice
 * leaves the BLAS path the whole batch takes); the last one, the
 * remainder, holds at least `align` too, or joins the one before. p
 * participants share the call while each one's part of the measured time is at
 * least kCoarseSliceHandoffs hand-offs; their parts are cut in
 * kCoarseSlicesPerParticipant slices each, so that a helper that wakes late
 * leaves its slices to the others rather than a wait.
 *
 * Thread contract: pure functions, any thread.
 */

#pragma once

#include <cstddef>

namespace faiss {
namespace ccd {

constexpr double kListReuseMinBytes = 16384;
constexpr double kReuseSavedNsPerByte = 0.025; ///< about 1 / (40 GB/s)
constexpr double kReuseMaxSaving = 0.4;

/// ScanTerms: one index's measured costs, in nanoseconds.
struct ScanTerms {
    double set_query_ns = 0; ///< per InvertedListScanner::set_query
    double set_list_ns = 0;  ///< per set_list (with PQ's per-list term)
    double merge_ns = 0;     ///< per item: seeding its heap and merging it
    double code_ns = 0;      ///< per code, query-major, all its costs in
    double code_list_major_ns = 0; ///< the same list-major; 0: never ran
};

/// BatchCounts: the batch being planned.
struct BatchCounts {
    double queries = 0;
    double items = 0;     ///< (query, list) scans
    double codes = 0;     ///< codes of the probed lists
    double code_size = 0; ///< bytes per code
};

/// query_major_ns, list_major_ns: the batch's scan time on one core.
double query_major_ns(const ScanTerms& t, const BatchCounts& b);
double list_major_ns(const ScanTerms& t, const BatchCounts& b);

/// prefer_list_major: whether list-major is the cheaper shape.
bool prefer_list_major(const ScanTerms& t, const BatchCounts& b);

/// ShapeHistory: what one table's priced calls measured so far.
struct ShapeHistory {
    bool query_major_measured = false;
    double calls = 0; ///< priced calls before this one
};

/// Every kShapeRetryEvery-th priced call runs the other shape (list-major
/// when its estimate is at most kShapeRetryMargin times query-major's).
constexpr double kShapeRetryEvery = 32;
constexpr double kShapeRetryMargin = 1.25;

/// choose_list_major: the shape of a priced batch: the cheaper one by
/// prefer_list_major, but
///  - query-major, when list-major wins on its prior alone (query-major
///    never measured here): one query-major call measures the other side,
///    and the next calls compare measure with measure (else the prior,
///    once taken, was never put to the test: a table could keep the
///    slower shape for every call);
///  - the other shape, every kShapeRetryEvery-th call: an estimate
///    measured cold (a table's first call) or under a busy neighbour is
///    measured again. Query-major, FAISS's own order, always; list-major
///    only within kShapeRetryMargin of query-major, so that a shape far
///    dearer (PQ's list-major, 3-5x) is not tried again.
///
/// explore: the shape was taken to be measured (either rule above), not
/// as the cheaper: its measure then replaces the estimate instead of
/// joining its moving average, which a first call's cold measure would
/// hold for tens of calls.
struct ShapeChoice {
    bool list_major = false;
    bool explore = false;
};
ShapeChoice choose_list_major(
        const ScanTerms& t,
        const BatchCounts& b,
        const ShapeHistory& h);

constexpr double kCoarseSliceHandoffs = 4;
constexpr int kCoarseSlicesPerParticipant = 8;
constexpr long kCoarseAlign = 64; ///< queries; rounded up to the threshold

/// CoarseCut: slice s holds queries [s * rows, min((s + 1) * rows, n)),
/// the last one to n; `helpers` take slices beside the caller.
struct CoarseCut {
    long rows = 0; ///< per slice; 0: one call, no cut
    int slices = 1;
    int helpers = 0;
};

/// coarse_cut: the cut of a quantizer call of `queries` queries for at
/// most `participants` threads, caller included: no cut before
/// ns_per_query was measured (0), nor when one participant is all the
/// measured time pays for. blas_threshold: FAISS's
/// distance_compute_blas_threshold.
CoarseCut coarse_cut(
        long queries,
        double ns_per_query,
        double handoff_ns,
        int participants,
        long blas_threshold);

} // namespace ccd
} // namespace faiss
