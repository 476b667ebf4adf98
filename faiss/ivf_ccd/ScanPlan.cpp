#include <faiss/ivf_ccd/ScanPlan.h>

namespace faiss {
namespace ccd {
namespace ivf {

ScanPlan::ScanPlan(
        const ResolvedCall& call,
        idx_t n,
        const idx_t* keys,
        bool knn)
        : others(call.other_callers()),
          codes(call.probed_codes(n, keys)),
          choice(knn ? call.list_major(n, codes) : ShapeChoice()),
          list_major(choice.list_major) {
    const int workers = call.runtime->pool().num_workers();
    alone = call.runs_alone(
            codes,
            others,
            !list_major && n <= workers,
            list_major);
    by_query = !alone && !list_major && n > workers;
}

ScanShape ScanPlan::cost_shape() const {
    if (list_major) {
        return ScanShape::list_major;
    }
    return alone ? ScanShape::alone
                 : (by_query ? ScanShape::other : ScanShape::split);
}

} // namespace ivf
} // namespace ccd
} // namespace faiss
