/**
 * CoarseAssignment: the nprobe nearest lists of every query of a CCD-mode
 * batch: one quantizer call in the calling thread, or, when the index
 * allows a cut and the batch's measured quantizer time pays for hand-offs
 * (BatchShape.h's coarse_cut), slices of it on the pool (the caller takes
 * slices too), FAISS's OpenMP held to one thread in each participant.
 */

#pragma once

#include <faiss/ivf_ccd/ResolvedCall.h>

#include <vector>

namespace faiss {
namespace ccd {
namespace ivf {

struct CoarseAssignment {
    std::vector<idx_t> keys; ///< n x nprobe
    std::vector<float> dis;  ///< n x nprobe
    double ms = 0;           ///< time the quantizer took
    int slices = 0; ///< slices shared with helpers (0: the caller alone)

    CoarseAssignment(const ResolvedCall& call, idx_t n, const float* x);
};

/// may_cut_coarse: whether `ivf`'s coarse assignment may be cut in
/// slices. A cut changes the last bits of the coarse distances (the BLAS
/// kernels round a call by its size), and codecs that add the coarse
/// distance to their own (IVFPQ by residual, SQ by residual with inner
/// product, any index not known here) would carry them into the answer:
/// theirs stays one call, as in modes 1-3 (mode 0's last bits change with
/// its thread count). Where they are not carried, a cut could only move
/// which list is probed between two lists whose centroids tie to the last
/// bit. Decided by type, not learnt: a table id names an address, which a
/// later index can reuse.
bool may_cut_coarse(const IndexIVF& ivf);

} // namespace ivf
} // namespace ccd
} // namespace faiss
