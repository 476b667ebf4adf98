#include <faiss/ccd_scheduler/HelperPlan.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace faiss {
namespace ccd {

bool helpers_may_pay(
        double total_work_ns,
        int num_workers,
        int other_callers,
        double handoff_ns) {
    const double payback = kPaybackFactor * std::max(0.0, handoff_ns);
    const int spare = num_workers - std::max(0, other_callers) - 1;
    return total_work_ns > 0 && total_work_ns >= payback && spare > 0;
}

std::vector<int> plan_helpers(const HelperPlanInput& in) {
    const size_t ng = in.work_ns.size();
    std::vector<int> helpers(ng, 0);
    const int num_workers =
            std::accumulate(in.ccd_workers.begin(), in.ccd_workers.end(), 0);
    const double payback = kPaybackFactor * std::max(0.0, in.handoff_ns);
    const double total =
            std::accumulate(in.work_ns.begin(), in.work_ns.end(), 0.0);
    if (!helpers_may_pay(total, num_workers, in.other_callers, in.handoff_ns)) {
        return helpers;
    }
    int spare = num_workers - std::max(0, in.other_callers) - 1;
    std::vector<int> want(ng, 0);
    for (size_t g = 0; g < ng; g++) {
        const int ccd = in.group_ccd.empty() ? -1 : in.group_ccd[g];
        int cap = ccd >= 0 && ccd < int(in.ccd_workers.size())
                ? in.ccd_workers[ccd]
                : num_workers;
        const bool callers_own = ccd == in.caller_ccd || ccd < 0;
        if (callers_own) {
            cap--; // the caller's own core is one of them
        }
        if (g < in.units.size()) {
            const int64_t left = in.units[g] - (callers_own ? 1 : 0);
            cap = int(std::min<int64_t>(cap, std::max<int64_t>(0, left)));
        }
        const double w = std::max(0.0, in.work_ns[g]);
        const double shares = payback > 0 ? std::floor(w / payback) : cap;
        want[g] = int(std::max(0.0, std::min(double(cap), shares)));
    }
    // Hand out `spare` one helper at a time to the group with the most
    // work per participant, so a cut falls on the groups that gain least.
    std::vector<size_t> order(ng);
    std::iota(order.begin(), order.end(), size_t(0));
    while (spare > 0) {
        size_t best = ng;
        double best_share = 0;
        for (size_t g : order) {
            if (helpers[g] >= want[g]) {
                continue;
            }
            const double share = in.work_ns[g] / double(helpers[g] + 1);
            if (best == ng || share > best_share) {
                best = g;
                best_share = share;
            }
        }
        if (best == ng) {
            break;
        }
        helpers[best]++;
        spare--;
    }
    return helpers;
}

} // namespace ccd
} // namespace faiss
