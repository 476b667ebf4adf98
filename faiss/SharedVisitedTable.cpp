#include <faiss/SharedVisitedTable.h>

#include <faiss/impl/FaissAssert.h>

#include <algorithm>
#include <cstring>

namespace faiss {
namespace ccd {

VisitedTable& SharedVisitedTable::for_query(size_t ntotal, int advances) {
    FAISS_THROW_IF_NOT_FMT(
            advances >= 0 && advances < kWrap - 2,
            "SharedVisitedTable: %d advances per query do not fit a wrap",
            advances);
    // A new number if the last query did not advance it (it threw): its
    // marks then never match. (A query that ran advanced it already.)
    if (vt_.visno == given_) {
        vt_.visno++;
    }
    // +1: FAISS sometimes marks with visno + 1.
    if (vt_.visno + advances + 1 >= kWrap) {
        std::memset(vt_.visited.data(), 0, dirty_);
        wiped_ += dirty_;
        vt_.visno = 1;
        if (vt_.visited.size() > kKeepBytes &&
            vt_.visited.size() > 2 * dirty_) {
            // Every byte is 0 now: shrinking keeps the invariant.
            vt_.visited.resize(std::max(dirty_, kKeepBytes));
            vt_.visited.shrink_to_fit();
        }
        dirty_ = 0;
    }
    if (vt_.visited.size() < ntotal) {
        vt_.visited.resize(ntotal); // new bytes are 0
    }
    dirty_ = std::max(dirty_, ntotal);
    given_ = vt_.visno;
    return vt_;
}

} // namespace ccd
} // namespace faiss
