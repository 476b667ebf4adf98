#include <faiss/ccd_scheduler/HelperPlan.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace faiss {
namespace ccd {

std::vector<int> plan_helpers(const HelperPlanInput& in) {
    const size_t ng = in.work_ns.size();
    std::vector<int> helpers(ng, 0);
    const int num_workers =
            std::accumulate(in.ccd_workers.begin(), in.ccd_workers.end(), 0);
    const double payback = kPaybackFactor * std::max(0.0, in.handoff_ns);
    const double total =
            std::accumulate(in.work_ns.begin(), in.work_ns.end(), 0.0);
    int spare = num_workers - std::max(0, in.other_callers) - 1;
    if (!(total > 0) || !(total >= payback) || spare <= 0) {
        return helpers;
    }
    std::vector<int> want(ng, 0);
    for (size_t g = 0; g < ng; g++) {
        const int ccd = in.group_ccd.empty() ? -1 : in.group_ccd[g];
        int cap = ccd >= 0 && ccd < int(in.ccd_workers.size())
                ? in.ccd_workers[ccd]
                : num_workers;
        if (ccd == in.caller_ccd || ccd < 0) {
            cap--; // the caller's own core is one of them
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
