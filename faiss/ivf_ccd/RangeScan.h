/**
 * RangeScan: the range scans of a CCD-mode batch (IndexIVF::
 * range_search_preassigned's loop, on the pool). Each participant keeps
 * its hits in its own buffer, so scans share nothing; the result is
 * assembled after the scans, each query's hits in probe order (FAISS's).
 */

#pragma once

#include <faiss/ivf_ccd/ResolvedCall.h>

namespace faiss {
struct RangeSearchResult;

namespace ccd {
namespace ivf {

/// range_scans: the scans of queries [0, n) into `result` (nq == n,
/// checked), max_codes ignored as FAISS's range search does; counts into
/// `stats` (may be null).
void range_scans(
        const ResolvedCall& call,
        idx_t n,
        const float* x,
        float radius,
        const idx_t* keys,
        const float* coarse_dis,
        RangeSearchResult* result,
        IndexIVFStats* stats);

} // namespace ivf
} // namespace ccd
} // namespace faiss
