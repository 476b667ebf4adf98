#include "drift.h"

#include <faiss/ccd_scheduler/HotColdMapping.h>
#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>

namespace bench {
namespace mapping {

using namespace faiss::ccd;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
}

/// Watched: a monitor on its own idle pool.
struct Watched {
    Watched(const Topology& topology,
            const MonitorConfig& config,
            std::shared_ptr<ManualClock> clock)
            : pool(topology, PolicyKind::ccd),
              monitor(pool, config, std::move(clock)) {}
    Pool pool;
    Monitor monitor;
};

} // namespace

Summary summarize(const std::vector<double>& values) {
    Summary s;
    if (values.empty()) {
        return s;
    }
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
    // P95: nearest rank.
    size_t rank = size_t(std::ceil(0.95 * double(v.size())));
    rank = std::min(std::max<size_t>(rank, 1), v.size());
    s.p95 = v[rank - 1];
    s.max = v.back();
    return s;
}

DriftResult run_drift(const DriftPlan& plan) {
    const auto t_start = std::chrono::steady_clock::now();
    const Topology topology = Topology::from_spec(plan.topology);
    const int nccd = topology.num_ccds();
    DriftingZipf workload(plan.workload);
    Rng rng(plan.seed);

    auto clock = std::make_shared<ManualClock>(0);
    struct Variant {
        const char* name;
        bool migration_aware;
        double fast_window_s;
    };
    const double base_window = plan.paper_fast_window_s;
    const std::string what_if =
            " (" + std::to_string(int(plan.what_if_fast_window_s)) + " s)";
    const std::vector<Variant> variants = {
            {"paper", false, base_window},
            {"migration-aware", true, base_window},
            {"paper", false, plan.what_if_fast_window_s},
            {"migration-aware", true, plan.what_if_fast_window_s}};
    const int nmon = int(variants.size());
    std::vector<std::unique_ptr<Watched>> watched;

    DriftResult r;
    r.spec = plan.topology;
    r.topology = topology.describe();
    r.num_ccds = nccd;
    r.seconds = plan.seconds;
    r.accesses_per_s = plan.accesses_per_s;
    r.steady_from_s = int(std::ceil(base_window));
    // Series: kHash, kRoundRobin, then kFirstMonitor + m, then oracle and
    // lower-bound.
    enum { kHash, kRoundRobin, kFirstMonitor };
    const int kOracle = kFirstMonitor + nmon, kBound = kOracle + 1;
    r.series.resize(kBound + 1);
    r.series[kHash].name = "hash";
    r.series[kRoundRobin].name = "round-robin";
    r.series[kOracle].name = "oracle";
    r.series[kBound].name = "lower-bound";
    for (int m = 0; m < nmon; m++) {
        const Variant& v = variants[m];
        MonitorConfig config;
        config.migration_aware = v.migration_aware;
        config.fast_window_s = v.fast_window_s;
        config.bucket_s = 1; // the rows' resolution, as first measured
        watched.emplace_back(new Watched(topology, config, clock));
        MonitorRun run;
        run.name = v.name + (v.fast_window_s == base_window ? "" : what_if);
        run.migration_aware = v.migration_aware;
        run.fast_window_s = v.fast_window_s;
        r.series[kFirstMonitor + m].name = run.name;
        r.monitors.push_back(run);
    }

    const HashMapping hash;
    std::vector<uint64_t> second_bytes(workload.num_ids(), 0);
    std::vector<uint32_t> touched;
    std::vector<std::vector<uint64_t>> loads(
            kOracle,
            std::vector<uint64_t>(nccd));
    std::vector<std::shared_ptr<const Mapping>> maps(nmon);
    for (int s = 0; s < plan.seconds; s++) {
        if (s > 0 && s % plan.workload.drift_period_s == 0) {
            workload.drift(rng);
            r.drift_at_s.push_back(s);
        }
        // The maps in force during this second: what the last tick left.
        for (int m = 0; m < nmon; m++) {
            maps[m] = watched[m]->pool.mapping();
        }
        for (auto& l : loads) {
            std::fill(l.begin(), l.end(), 0);
        }
        touched.clear();
        uint64_t total = 0;
        for (int k = 0; k < plan.accesses_per_s; k++) {
            const uint32_t i = workload.draw(rng);
            const MappingId id = workload.id(i);
            const uint64_t b = workload.bytes(i);
            loads[kHash][hash.pick_ccd(id, nccd)] += b;
            loads[kRoundRobin][i % uint32_t(nccd)] += b;
            for (int m = 0; m < nmon; m++) {
                loads[kFirstMonitor + m][maps[m]->pick_ccd(id, nccd)] += b;
                watched[m]->monitor.record(id, workload.list_size(i), b);
            }
            if (second_bytes[i] == 0) {
                touched.push_back(i);
            }
            second_bytes[i] += b;
            total += b;
        }
        r.bytes_per_s.push_back(total);
        for (int k = 0; k < kOracle; k++) {
            const uint64_t sum = std::accumulate(
                    loads[k].begin(),
                    loads[k].end(),
                    uint64_t(0));
            r.consistent = r.consistent && sum == total;
            r.series[k].imbalance.push_back(imbalance(loads[k]));
        }
        // References: the best hot-cold map of this second, and the bound
        // that one indivisible hottest id sets.
        std::vector<uint64_t> traffic(touched.size());
        uint64_t hottest = 0;
        for (size_t j = 0; j < touched.size(); j++) {
            traffic[j] = second_bytes[touched[j]];
            hottest = std::max(hottest, traffic[j]);
            second_bytes[touched[j]] = 0;
        }
        r.series[kOracle].imbalance.push_back(imbalance(
                ccd_loads(traffic, map_hot_cold(traffic, nccd), nccd)));
        r.series[kBound].imbalance.push_back(std::max(
                1.0,
                double(hottest) / (double(total) / double(nccd))));

        // End of the second: every monitor sees it, may re-map.
        clock->set(double(s + 1));
        for (int m = 0; m < nmon; m++) {
            Monitor& monitor = watched[m]->monitor;
            MonitorRun& run = r.monitors[m];
            const auto t0 = std::chrono::steady_clock::now();
            const bool remapped = monitor.tick();
            run.tick_ms.push_back(1e3 * seconds_since(t0));
            const MonitorStats st = monitor.stats();
            run.window_imbalance.push_back(st.imbalance);
            run.records = st.records;
            if (remapped) {
                const RemapRecord& rec = st.last_remap;
                RemapInfo info;
                info.time = rec.time;
                info.imbalance_before = rec.imbalance_before;
                info.imbalance_after = rec.imbalance_after;
                info.ids_placed = rec.ids_placed;
                info.ids_moved = rec.ids_moved;
                info.traffic_moved = rec.traffic_moved;
                info.window_bytes = st.fast_bytes;
                info.build_ms = rec.build_ms;
                run.remaps.push_back(info);
            }
        }
    }
    for (const MonitorRun& run : r.monitors) {
        r.consistent = r.consistent &&
                run.records ==
                        uint64_t(plan.seconds) * uint64_t(plan.accesses_per_s);
    }
    for (PlacementSeries& p : r.series) {
        p.all = summarize(p.imbalance);
        const size_t from =
                std::min<size_t>(size_t(r.steady_from_s), p.imbalance.size());
        p.steady = summarize(std::vector<double>(
                p.imbalance.begin() + from,
                p.imbalance.end()));
    }
    r.wall_s = seconds_since(t_start);
    return r;
}

} // namespace mapping
} // namespace bench
