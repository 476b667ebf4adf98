#include <faiss/BatchShape.h>

#include <algorithm>

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
    // Whole slices of `rows`; a remainder joins the last (it then ends the
    // batch, as the one call's last columns do).
    cut.slices = int(std::max(1L, queries / cut.rows));
    cut.helpers = std::min(p, cut.slices) - 1;
    if (cut.slices == 1) {
        cut = CoarseCut();
    }
    return cut;
}

} // namespace ccd
} // namespace faiss
