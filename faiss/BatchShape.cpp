#include <faiss/BatchShape.h>

#include <algorithm>
#include <cmath>

namespace faiss {
namespace ccd {

double query_major_ns(const ScanTerms& t, const BatchCounts& b) {
    return b.codes * t.code_ns;
}

double list_major_ns(const ScanTerms& t, const BatchCounts& b) {
    if (t.code_list_major_ns > 0) {
        return b.codes * t.code_list_major_ns;
    }
    const double list_bytes = b.items > 0 ? b.codes * b.code_size / b.items : 0;
    const double saved = list_bytes < kListReuseMinBytes
            ? 0
            : std::min(
                      kReuseMaxSaving * t.code_ns,
                      kReuseSavedNsPerByte * b.code_size);
    return query_major_ns(t, b) +
            std::max(0.0, b.items - b.queries) * t.set_query_ns -
            b.codes * saved;
}

bool prefer_list_major(const ScanTerms& t, const BatchCounts& b) {
    return list_major_ns(t, b) < query_major_ns(t, b);
}

ShapeChoice choose_list_major(
        const ScanTerms& t,
        const BatchCounts& b,
        const ShapeHistory& h) {
    const double lm = list_major_ns(t, b), qm = query_major_ns(t, b);
    const bool list_major = lm < qm;
    if (list_major && !h.query_major_measured) {
        return {false, true};
    }
    const bool retry = h.calls > 0 &&
            std::fmod(h.calls + 1, kShapeRetryEvery) == 0 &&
            (list_major || lm <= kShapeRetryMargin * qm);
    return {list_major != retry, retry};
}

CoarseCut coarse_cut(
        long queries,
        double ns_per_query,
        double handoff_ns,
        int participants,
        long blas_threshold) {
    CoarseCut cut;
    if (!(ns_per_query > 0)) {
        return cut;
    }
    const long align = kCoarseAlign *
            ((std::max(1L, blas_threshold) + kCoarseAlign - 1) / kCoarseAlign);
    const double handoffs = kCoarseSliceHandoffs * std::max(0.0, handoff_ns);
    int p = std::max(1, participants);
    while (p > 1 &&
           (queries < 2 * align ||
            double(queries) * ns_per_query / p < handoffs)) {
        p--;
    }
    if (p == 1) {
        return cut;
    }
    const long want = (queries + p * kCoarseSlicesPerParticipant - 1) /
            (p * kCoarseSlicesPerParticipant);
    cut.rows = std::max(align, (want + align - 1) / align * align);
    // Whole slices of `rows`, then the remainder: a slice of its own when
    // it holds `align` queries or more (the smallest, claimed last, so the
    // participants end together; joined to the last it made that slice
    // nearly twice the others: 2,464 queries against 1,536 for 4,000 on
    // two), else joined to the last (no slice under the BLAS threshold).
    const long whole = queries / cut.rows;
    cut.slices = int(std::max(1L, whole + (queries % cut.rows >= align)));
    cut.helpers = std::min(p, cut.slices) - 1;
    if (cut.slices == 1) {
        cut = CoarseCut();
    }
    return cut;
}

} // namespace ccd
} // namespace faiss
