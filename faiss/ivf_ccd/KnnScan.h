/**
 * KnnScan: the k-NN scans of a CCD-mode batch (IndexIVF::
 * search_preassigned's loop, on the pool). Each (query, list chunk) item
 * scans into its participant's own top-k heap, seeded just past the
 * query's current k-th distance, then merges into the query's heap under
 * its lock; the answer is the k smallest (distance, label) pairs,
 * whichever order the items ran in.
 */

#pragma once

#include <faiss/ivf_ccd/ResolvedCall.h>

namespace faiss {
namespace ccd {
namespace ivf {

/// knn_scans: the scans of queries [0, n) into distances and labels (n x
/// k), a slice of queries at a time (each query's heap is its own, so
/// slicing changes no answer); counts into `stats` (may be null).
void knn_scans(
        const ResolvedCall& call,
        idx_t n,
        const float* x,
        idx_t k,
        const idx_t* keys,
        const float* coarse_dis,
        float* distances,
        idx_t* labels,
        IndexIVFStats* stats);

} // namespace ivf
} // namespace ccd
} // namespace faiss
