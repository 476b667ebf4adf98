/**
 * ScanPlan: how one batch of a ResolvedCall is scanned: whether its
 * calling thread scans it alone (ResolvedCall::runs_alone), its order
 * (list-major or query-major, BatchShape.h) and its grain.
 *
 * by_query: a query-major batch with more queries than the pool has
 * workers is shared query by query (a unit is a run of one query's scans,
 * in probe order, of lists on one CCD), not scan by scan: participants on
 * the same query would merge into one heap under one lock, passing its
 * cache lines back and forth, where stock's mode 0 gives each thread whole
 * queries. Lists are cut in chunks only when a single query's scans are
 * shared.
 */

#pragma once

#include <faiss/IVFScanCost.h>
#include <faiss/ivf_ccd/ResolvedCall.h>

namespace faiss {
namespace ccd {
namespace ivf {

struct ScanPlan {
    int others; ///< the pool's other callers when the plan was made
    double codes;
    ShapeChoice choice; ///< {} for range search (query-major)
    bool list_major;
    bool alone;
    bool by_query;

    ScanPlan(const ResolvedCall& call, idx_t n, const idx_t* keys, bool knn);

    /// split: whether lists are cut in chunks.
    bool split() const {
        return !alone && !by_query;
    }
    /// cost_shape: the shape this call's measured cost is an estimate of.
    ScanShape cost_shape() const;
};

} // namespace ivf
} // namespace ccd
} // namespace faiss
