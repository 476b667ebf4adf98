/**
 * fuzz_scheduler_config: the pool's configuration checks with values
 * decoded from the input (NaN, infinities, negative, huge, denormal):
 * StealConfig (through StealPolicy), MonitorConfig (through Monitor and
 * its TrafficWindows, then driven by a ManualClock), RuntimeOptions
 * (monitor period, capacities, steal config, topology) and the pure
 * helper plan (plan_helpers), whose inputs are measured costs.
 *
 * Properties:
 *  - A config inside its documented domain constructs, one outside
 *    throws std::invalid_argument with a message; nothing else escapes,
 *    and no sanitizer fires while the object is then used. The domains:
 *    StealConfig: cross_ccd_threshold >= 0 or kCcdWorkers (-1),
 *      max_backoff_shift in [0, 30] (StealPolicy.cpp's check);
 *    MonitorConfig: 1e-6 <= bucket_s <= fast_window_s, slow_window_s,
 *      at most 1e7 buckets per window (TrafficWindow.h),
 *      imbalance_threshold >= 1 (Monitor.cpp);
 *    Monitor::start: a period in (0, 3600];
 *    RuntimeOptions: a valid topology, a monitor period in (0, 3600) when
 *      the monitor is on, queue capacities powers of two >= 2, and the
 *      above.
 *  - A valid StealConfig resolves kCcdWorkers to each CCD's size, and its
 *    backoff skips 2^min(k, max_backoff_shift) - 1 rounds after k failures.
 *  - A Monitor counts every record it drained (zero-byte ones too, at
 *    any clock time); its pool's mapping epoch never goes back.
 *  - plan_helpers gives each group between 0 and its cap (the CCD's
 *    workers, one less on the caller's own CCD; at most its units, one
 *    less on the caller's own) and at most the spare cores in all
 *    (workers - other callers - 1), and nothing when helpers_may_pay says
 *    no helper can pay.
 *
 * Queue capacities are drawn below 2^17, spin settings left alone: a
 * valid 2^31-slot queue, or an hour of spinning, is not a fault. Pools do
 * not pin their workers (see unpinned()).
 */

#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/HelperPlan.h>
#include <faiss/ccd_scheduler/Monitor.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/Topology.h>
#include <faiss/ccd_scheduler/TrafficWindow.h>

#include "fuzz_common.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

using namespace faiss::ccd;

namespace {

/// expect_invalid: f() must throw std::invalid_argument with a message.
template <class F>
void expect_invalid(F f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        FUZZ_CHECK(e.what()[0] != '\0');
        return;
    }
    FUZZ_CHECK(!"accepted a config outside its documented domain");
}

StealConfig any_steal_config(FuzzedDataProvider& in) {
    StealConfig c;
    c.cross_ccd_threshold = in.ConsumeIntegral<int64_t>();
    c.max_backoff_shift = in.ConsumeIntegral<int>();
    return c;
}

bool valid(const StealConfig& c) {
    return (c.cross_ccd_threshold >= 0 ||
            c.cross_ccd_threshold == StealConfig::kCcdWorkers) &&
            c.max_backoff_shift >= 0 && c.max_backoff_shift <= 30;
}

MonitorConfig any_monitor_config(FuzzedDataProvider& in) {
    MonitorConfig c;
    c.fast_window_s = fuzz::any_double(in);
    c.slow_window_s = fuzz::any_double(in);
    c.bucket_s = fuzz::any_double(in);
    c.imbalance_threshold = fuzz::any_double(in);
    c.min_remap_interval_s = fuzz::any_double(in);
    c.migration_aware = in.ConsumeBool();
    c.migration_slack = fuzz::any_double(in);
    return c;
}

bool valid(const MonitorConfig& c) {
    auto window_ok = [&](double window_s) {
        return window_s >= c.bucket_s &&
                window_s / c.bucket_s <= TrafficWindow::kMaxBuckets;
    };
    return c.bucket_s >= TrafficWindow::kMinBucketS &&
            window_ok(c.fast_window_s) && window_ok(c.slow_window_s) &&
            c.imbalance_threshold >= 1;
}

bool power_of_two(uint32_t v) {
    return v >= 2 && (v & (v - 1)) == 0;
}

void fuzz_steal_config(FuzzedDataProvider& in) {
    static const char* shapes[] = {"1x1", "2x1", "1x3", "2x2", "0;1-2;3-5"};
    const Topology topo = Topology::from_spec(in.PickValueInArray(shapes));
    const StealConfig config = any_steal_config(in);
    if (!valid(config)) {
        expect_invalid([&] {
            StealPolicy(topo, PolicyKind::ccd, config);
        });
        return;
    }
    const StealPolicy policy(topo, PolicyKind::ccd, config);
    for (int c = 0; c < topo.num_ccds(); c++) {
        FUZZ_CHECK(
                policy.cross_ccd_threshold(c) ==
                (config.cross_ccd_threshold == StealConfig::kCcdWorkers
                         ? topo.ccd_size(c)
                         : config.cross_ccd_threshold));
    }
    CrossCcdBackoff backoff(config.max_backoff_shift);
    const int k = in.ConsumeIntegralInRange<int>(1, 40);
    for (int i = 0; i < k; i++) {
        backoff.on_failure();
    }
    const int64_t skip =
            (int64_t(1) << std::min(k, config.max_backoff_shift)) - 1;
    FUZZ_CHECK(backoff.rounds_to_skip() == skip);
    if (skip <= 64) {
        for (int64_t i = 0; i < skip; i++) {
            FUZZ_CHECK(!backoff.should_try());
        }
        FUZZ_CHECK(backoff.should_try());
    }
}

/// unpinned: pools here do not pin their workers. Pinning is not what is
/// fuzzed, and on a loaded virtual machine one sched_setaffinity() can
/// take seconds.
PoolOptions unpinned() {
    PoolOptions o;
    o.pin_workers = false;
    return o;
}

/// the_pool: two CCDs of one worker, for the monitors (made once).
Pool& the_pool() {
    static Pool* pool =
            new Pool(Topology::from_spec("2x1"), PolicyKind::ccd, unpinned());
    return *pool;
}

void fuzz_monitor(FuzzedDataProvider& in) {
    const MonitorConfig config = any_monitor_config(in);
    Pool& pool = the_pool();
    if (!valid(config)) {
        expect_invalid([&] {
            Monitor(pool, config);
        });
        return;
    }
    auto clock = std::make_shared<ManualClock>(
            in.ConsumeIntegralInRange<int>(0, 1 << 30) / 16.0);
    uint64_t epoch = pool.mapping_epoch();
    {
        Monitor monitor(pool, config, clock);
        uint64_t records = 0;
        const int ticks = in.ConsumeIntegralInRange<int>(0, 8);
        for (int t = 0; t < ticks; t++) {
            const int n = in.ConsumeIntegralInRange<int>(0, 16);
            for (int i = 0; i < n; i++) {
                const MappingId id =
                        make_mapping_id(0, in.ConsumeIntegral<uint8_t>());
                const auto bytes =
                        in.ConsumeIntegralInRange<uint64_t>(0, 1 << 20);
                // 0 bytes included: two such records of one id used to
                // crash the window when their buckets expired.
                monitor.record(id, 1, bytes);
                records++;
            }
            clock->advance(in.ConsumeIntegralInRange<int>(0, 1 << 20) / 64.0);
            monitor.tick();
            FUZZ_CHECK(monitor.stats().records == records);
            FUZZ_CHECK(pool.mapping_epoch() >= epoch);
            epoch = pool.mapping_epoch();
        }
        const double period = fuzz::any_double(in);
        if (!(period > 0 && period <= 3600)) {
            expect_invalid([&] {
                monitor.start(period);
            });
        } else {
            monitor.start(period);
            monitor.stop();
        }
    }
    pool.set_mapping(nullptr); // the next input starts from the hash
}

void fuzz_runtime_options(FuzzedDataProvider& in) {
    static const char* topologies[] = {"1x1", "2x1", "1x2", "auto", "", "3-"};
    RuntimeOptions o;
    o.topology = in.PickValueInArray(topologies);
    o.policy = in.PickValueInArray(
            {PolicyKind::ccd, PolicyKind::flat_steal, PolicyKind::round_robin});
    o.pool = unpinned();
    o.pool.steal = any_steal_config(in);
    o.pool.fifo_callers = in.ConsumeBool();
    o.pool.deque_capacity = in.ConsumeIntegralInRange<uint32_t>(0, 1 << 16);
    o.pool.ring_capacity = in.ConsumeIntegralInRange<uint32_t>(0, 1 << 16);
    o.monitor = in.ConsumeBool();
    o.monitor_period_s = fuzz::any_double(in);
    o.monitor_config = any_monitor_config(in);
    const bool ok = o.topology != "3-" && valid(o.pool.steal) &&
            power_of_two(o.pool.deque_capacity) &&
            power_of_two(o.pool.ring_capacity) &&
            (!o.monitor ||
             (o.monitor_period_s > 0 && o.monitor_period_s < 3600 &&
              valid(o.monitor_config)));
    if (ok) {
        Runtime runtime(o);
        FUZZ_CHECK((runtime.monitor() != nullptr) == o.monitor);
    } else {
        expect_invalid([&] {
            Runtime runtime(o);
        });
    }
}

void fuzz_helper_plan(FuzzedDataProvider& in) {
    HelperPlanInput p;
    const int nccd = in.ConsumeIntegralInRange<int>(0, 4);
    for (int c = 0; c < nccd; c++) {
        p.ccd_workers.push_back(in.ConsumeIntegralInRange<int>(0, 64));
    }
    const int ng = in.ConsumeIntegralInRange<int>(0, 6);
    const bool with_ccds = in.ConsumeBool(), with_units = in.ConsumeBool();
    for (int g = 0; g < ng; g++) {
        p.work_ns.push_back(fuzz::any_double(in));
        if (with_ccds) {
            p.group_ccd.push_back(in.ConsumeIntegralInRange<int>(-1, nccd));
        }
        if (with_units) {
            p.units.push_back(in.ConsumeIntegralInRange<int64_t>(0, 1 << 20));
        }
    }
    p.caller_ccd = in.ConsumeIntegralInRange<int>(-1, nccd);
    p.other_callers = in.ConsumeIntegral<int>();
    p.handoff_ns = fuzz::any_double(in);

    const std::vector<int> h = plan_helpers(p);
    FUZZ_CHECK(int(h.size()) == ng);
    const int workers =
            std::accumulate(p.ccd_workers.begin(), p.ccd_workers.end(), 0);
    const double total =
            std::accumulate(p.work_ns.begin(), p.work_ns.end(), 0.0);
    const bool may_pay =
            helpers_may_pay(total, workers, p.other_callers, p.handoff_ns);
    const int spare = workers - std::max(0, p.other_callers) - 1;
    int64_t sum = 0;
    for (int g = 0; g < ng; g++) {
        const int ccd = with_ccds ? p.group_ccd[g] : -1;
        const bool own = ccd < 0 || ccd == p.caller_ccd;
        const int64_t cap =
                (ccd >= 0 && ccd < nccd ? p.ccd_workers[ccd] : workers) - own;
        FUZZ_CHECK(h[g] >= 0 && h[g] <= std::max<int64_t>(0, cap));
        FUZZ_CHECK(
                !with_units || h[g] <= std::max<int64_t>(0, p.units[g] - own));
        FUZZ_CHECK(may_pay || h[g] == 0);
        sum += h[g];
    }
    FUZZ_CHECK(sum <= std::max(0, spare));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // "auto" is then this shape, on any machine.
    setenv("FAISS_CCD_TOPOLOGY", "1x2", 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    fuzz_steal_config(in);
    fuzz_monitor(in);
    fuzz_runtime_options(in);
    fuzz_helper_plan(in);
    return 0;
}
