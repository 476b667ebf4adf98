#include <faiss/ivf_ccd/ScanShare.h>

#include <faiss/IVFScanCost.h>
#include <faiss/ccd_scheduler/HelperPlan.h>
#include <faiss/ccd_scheduler/Mapping.h>

#include <algorithm>
#include <mutex>

namespace faiss {
namespace ccd {
namespace ivf {

int64_t order_items(std::vector<ScanItem>& items, bool list_major) {
    if (!list_major) {
        return 0;
    }
    const int64_t t0 = steady_now_ns();
    std::stable_sort(
            items.begin(),
            items.end(),
            [](const ScanItem& a, const ScanItem& b) {
                return a.list_no != b.list_no ? a.list_no < b.list_no
                                              : a.begin < b.begin;
            });
    return steady_now_ns() - t0;
}

std::vector<ScanUnit> cut_units(
        const ResolvedCall& call,
        const std::vector<ScanItem>& items,
        size_t max_items,
        bool by_query) {
    Pool& pool = call.runtime->pool();
    auto id_of = [&](size_t i) {
        return make_mapping_id(call.table_id, uint32_t(items[i].list_no));
    };
    std::vector<ScanUnit> units;
    for (size_t b = 0; b < items.size();) {
        size_t e = b + 1;
        if (by_query) {
            const int ccd = pool.pick_ccd(id_of(b));
            while (e < items.size() && items[e].q == items[b].q &&
                   pool.pick_ccd(id_of(e)) == ccd) {
                e++;
            }
        }
        while (!by_query && e < items.size() && e - b < max_items &&
               items[e].list_no == items[b].list_no &&
               items[e].begin == items[b].begin) {
            e++;
        }
        size_t codes = 0;
        for (size_t i = b; i < e; i++) {
            codes += items[i].end - items[i].begin;
        }
        units.push_back({b, e, id_of(b), codes});
        b = e;
    }
    return units;
}

void count_traffic(
        const std::vector<ScanItem>& items,
        const ScanUnit& unit,
        ListTraffic& traffic) {
    for (size_t b = unit.first; b < unit.last;) {
        const idx_t list_no = items[b].list_no;
        size_t n = 0, e = b;
        for (; e < unit.last && items[e].list_no == list_no; e++) {
            n += items[e].end - items[e].begin;
        }
        traffic[list_no] += n;
        b = e;
    }
}

void record_traffic(const ResolvedCall& call, const ListTraffic& traffic) {
    TrafficSink* sink = call.sink;
    if (sink == nullptr) {
        return;
    }
    const size_t bytes_per_code = call.ivf.code_size + sizeof(idx_t);
    for (const auto& [list_no, n] : traffic) {
        sink->record(
                make_mapping_id(call.table_id, uint32_t(list_no)),
                n,
                n * bytes_per_code);
    }
}

SharedRun plan_shared(
        const ResolvedCall& call,
        const ScanPlan& plan,
        std::vector<ScanUnit>& units,
        double ns_per_code) {
    Pool& pool = call.runtime->pool();
    const Topology& topo = pool.topology();
    const int nccd = topo.num_ccds();
    std::vector<int> ccd_of_unit(units.size());
    std::vector<size_t> count(nccd + 1, 0);
    for (size_t u = 0; u < units.size(); u++) {
        const int c = pool.pick_ccd(units[u].id);
        ccd_of_unit[u] = c >= 0 && c < nccd ? c : nccd;
        count[ccd_of_unit[u]]++;
    }
    std::vector<size_t> at(nccd + 1, 0);
    for (int g = 1; g <= nccd; g++) {
        at[g] = at[g - 1] + count[g - 1];
    }
    const std::vector<size_t> starts = at;
    std::vector<ScanUnit> sorted(units.size());
    for (size_t u = 0; u < units.size(); u++) {
        sorted[at[ccd_of_unit[u]]++] = units[u];
    }
    units.swap(sorted);

    SharedRun run;
    HelperPlanInput in;
    in.caller_ccd = pool.caller_ccd();
    in.handoff_ns = pool.handoff_ns();
    in.other_callers = plan.others;
    for (int c = 0; c < nccd; c++) {
        in.ccd_workers.push_back(topo.ccd_size(c));
    }
    for (int g = 0; g <= nccd; g++) {
        const size_t b = starts[g], e = b + count[g];
        if (b == e) {
            continue;
        }
        double codes = 0;
        for (size_t u = b; u < e; u++) {
            codes += double(units[u].codes);
        }
        ShareGroup sg;
        sg.id = units[b].id;
        sg.begin = int64_t(b);
        sg.end = int64_t(e);
        run.groups.push_back(sg);
        in.work_ns.push_back(codes * ns_per_code);
        in.units.push_back(int64_t(e - b));
        in.group_ccd.push_back(g < nccd ? g : -1);
    }
    run.caller_first = int(
            std::find(in.group_ccd.begin(), in.group_ccd.end(), in.caller_ccd) -
            in.group_ccd.begin());
    if (run.caller_first == int(run.groups.size())) {
        run.caller_first = 0;
    }
    const std::vector<int> helpers = call.shape.helpers < 0
            ? plan_helpers(in)
            : std::vector<int>(run.groups.size(), call.shape.helpers);
    for (size_t g = 0; g < run.groups.size(); g++) {
        run.groups[g].helpers = helpers[g];
        run.estimated_ns += in.work_ns[g];
    }
    return run;
}

void note_share(
        const ResolvedCall& call,
        const ScanPlan& plan,
        const ShareOutcome& out) {
    const double held_ns = plan.list_major ? double(out.order_ns) +
                    double(out.wall_ns) * double(1 + out.st.helpers_with_units)
                                           : out.scan_ns;
    note_scan_cost(
            call.table_id,
            held_ns,
            out.scanned,
            plan.cost_shape(),
            plan.choice.explore);
    std::lock_guard<std::mutex> lock(stats_mutex());
    IVFSearchCCDStats& s = ivf_ccd_stats;
    s.calls++;
    s.inline_calls += out.st.helpers_submitted == 0;
    s.list_major_calls += plan.list_major;
    s.units += size_t(out.st.units);
    s.units_by_caller += size_t(out.st.units_by_caller);
    s.helpers += size_t(out.st.helpers_submitted);
    s.helpers_with_units += size_t(out.st.helpers_with_units);
    s.estimated_ms += out.estimated_ns * 1e-6;
    s.scan_ms += out.scan_ns * 1e-6;
}

} // namespace ivf
} // namespace ccd
} // namespace faiss
