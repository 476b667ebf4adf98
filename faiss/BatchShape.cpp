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

} // namespace ccd
} // namespace faiss
