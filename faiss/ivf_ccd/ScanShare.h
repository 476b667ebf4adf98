/**
 * ScanShare: the scans of one batch as a WorkShare (ccd_scheduler/
 * WorkShare.h): the batch's items cut into units (a list chunk and up to
 * kQueriesPerListUnit of its queries, list-major; one item, or a run of
 * one query's items on one CCD, query-major), grouped by the CCD their
 * lists map to, the helpers planned from the measured costs; each
 * participant scans with a Body's Local state (KnnScan.cpp, RangeScan.cpp)
 * and its measurements and traffic join the call's when it finishes.
 *
 * run_scans is the one way in: it orders the items as the plan has them,
 * runs the share, and asks InterruptCallback once, in the calling thread.
 *
 * Body: `struct Local` (constructible from the Body), `scan(Local&, const
 * ScanItem&) const` and `finish(Local&) const`, which runs once per
 * participant, in its thread, before its last unit is reported done.
 */

#pragma once

#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/WorkShare.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/ivf_ccd/ResolvedCall.h>
#include <faiss/ivf_ccd/ScanPlan.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <typeinfo>
#include <unordered_map>
#include <vector>

namespace faiss {
namespace ccd {
namespace ivf {

/// kQueriesPerListUnit: queries per list-major unit: enough to amortise
/// the list's trip into cache, few enough that a hot list still spreads
/// over its CCD's cores.
constexpr size_t kQueriesPerListUnit = 32;

/// ScanUnit: items [first, last) of the batch, the grain participants
/// claim; keyed by its first list's MappingId.
struct ScanUnit {
    size_t first;
    size_t last;
    MappingId id;
    size_t codes;
};

/// ListTraffic: codes scanned per list by one participant.
using ListTraffic = std::unordered_map<idx_t, size_t>;

/// order_items: list-major sorts the items by list chunk (stable: by
/// query within one); returns the time it took (0 query-major).
int64_t order_items(std::vector<ScanItem>& items, bool list_major);

/// cut_units: consecutive items of the same list chunk form one unit, at
/// most `max_items` of them; by_query: consecutive items of the same
/// query whose lists map to the same CCD (ScanPlan::by_query).
std::vector<ScanUnit> cut_units(
        const ResolvedCall& call,
        const std::vector<ScanItem>& items,
        size_t max_items,
        bool by_query);

/// count_traffic: a unit's codes per list into `traffic`. A by-query unit
/// spans several lists (of one CCD): each gets its own codes. One map
/// update per run of items of the same list (a list-major unit is one).
void count_traffic(
        const std::vector<ScanItem>& items,
        const ScanUnit& unit,
        ListTraffic& traffic);

/// record_traffic: a participant's traffic into the call's sink, once
/// per list (a by-query batch of 131,072 items recorded one record per
/// item held the Monitor's buffers until its next tick).
void record_traffic(const ResolvedCall& call, const ListTraffic& traffic);

/// SharedRun: a shared batch's groups (one per CCD holding units, the
/// units reordered to match), where the caller starts and what the plan
/// estimated.
struct SharedRun {
    std::vector<ShareGroup> groups;
    int caller_first = 0;
    double estimated_ns = 0;
};

/// plan_shared: order `units` by the CCD their lists map to (stable:
/// each group keeps the call's order; the last group holds units the
/// policy does not place, as under flat_steal and round_robin) and plan
/// each group's helpers (the call's own count, or plan_helpers).
SharedRun plan_shared(
        const ResolvedCall& call,
        const ScanPlan& plan,
        std::vector<ScanUnit>& units,
        double ns_per_code);

/// ShareOutcome: what a run measured, for note_share.
struct ShareOutcome {
    int64_t order_ns; ///< the items' sort, in the caller
    int64_t wall_ns;  ///< the run, from its start in the caller
    ShareStats st;    ///< the work share's counts
    double estimated_ns;
    double scan_ns; ///< the participants' units, summed
    double scanned; ///< codes scanned
};

/// note_share: the run's cost into the index's estimates (IVFScanCost.h)
/// and its counts into ivf_ccd_stats.
///
/// A list-major call's cost is noted as what it held of the machine: its
/// sort plus its wall time once per participant, so the waits for its
/// larger units' tail count (its units alone, measured, looked cheaper
/// per code than query-major's while its calls took longer).
void note_share(
        const ResolvedCall& call,
        const ScanPlan& plan,
        const ShareOutcome& out);

template <class Body>
struct ScanShare final : RunnerFactory {
    const ResolvedCall& call;
    const Body& body;
    const std::vector<ScanItem>& items;
    std::vector<ScanUnit> units;
    mutable std::atomic<int64_t> scan_ns{0};
    mutable std::atomic<size_t> scanned{0};

    /// Runner: one participant's scanner state; its measurements join the
    /// call's, and its traffic goes to the sink, when it dies (before its
    /// last unit is reported done).
    struct Runner final : UnitRunner {
        const ScanShare& share;
        typename Body::Local local;
        int64_t ns = 0;
        size_t codes = 0;
        ListTraffic traffic;

        explicit Runner(const ScanShare& s) : share(s), local(s.body) {}
        ~Runner() override {
            share.body.finish(local);
            // relaxed: sums read after the share completed, whose
            // release/acquire orders them.
            share.scan_ns.fetch_add(ns, std::memory_order_relaxed);
            share.scanned.fetch_add(codes, std::memory_order_relaxed);
            record_traffic(share.call, traffic);
        }
        void run(int64_t u) override {
            const ScanUnit& unit = share.units[u];
            const int64_t t0 = steady_now_ns();
            for (size_t i = unit.first; i < unit.last; i++) {
                share.body.scan(local, share.items[i]);
            }
            ns += steady_now_ns() - t0;
            codes += unit.codes;
            if (share.call.sink != nullptr) {
                count_traffic(share.items, unit, traffic);
            }
        }
    };

    ScanShare(
            const ResolvedCall& c,
            const Body& b,
            const std::vector<ScanItem>& it)
            : call(c), body(b), items(it) {}

    std::unique_ptr<UnitRunner> make_runner() const override {
        return std::unique_ptr<UnitRunner>(new Runner(*this));
    }

    /// run: alone, the caller runs every unit in order, without a
    /// WorkShare (the body still scans into seeded heaps and merges, not
    /// straight into the answer as FAISS's loop does, so that ties resolve
    /// the same whichever shape the cost model picks); otherwise on the
    /// pool as plan_shared has it.
    void run(const ScanPlan& plan, int64_t order_ns) {
        const int64_t t_start = steady_now_ns();
        const double ns_per_code = call.ns_per_code(plan.list_major);
        ShareOutcome out{};
        out.order_ns = order_ns;
        if (plan.alone) {
            double codes = 0;
            for (const ScanUnit& unit : units) {
                codes += double(unit.codes);
            }
            out.estimated_ns = codes * ns_per_code;
            {
                Runner runner(*this);
                for (size_t u = 0; u < units.size(); u++) {
                    runner.run(int64_t(u));
                }
            }
            out.st.units = out.st.units_by_caller = int64_t(units.size());
        } else {
            SharedRun shared = plan_shared(call, plan, units, ns_per_code);
            out.estimated_ns = shared.estimated_ns;
            out.st = run_shared(
                    call.runtime->pool(),
                    shared.groups,
                    shared.caller_first,
                    *this);
        }
        out.wall_ns = steady_now_ns() - t_start;
        out.scan_ns = double(scan_ns.load(std::memory_order_relaxed));
        out.scanned = double(scanned.load(std::memory_order_relaxed));
        note_share(call, plan, out);
    }
};

/// run_scans: the batch's scans as `plan` has them, in the calling thread
/// and the helpers the plan gives it; a scan's exception comes back here
/// as IndexIVF::search_preassigned reports one, and InterruptCallback is
/// asked once, after the scans.
template <class Body>
void run_scans(
        const ResolvedCall& call,
        const ScanPlan& plan,
        std::vector<ScanItem>& items,
        const Body& body) {
    const int64_t order_ns = order_items(items, plan.list_major);
    try {
        ScanShare<Body> share(call, body, items);
        share.units = cut_units(
                call,
                items,
                plan.list_major ? kQueriesPerListUnit : 1,
                plan.by_query);
        share.run(plan, order_ns);
    } catch (const std::exception& e) {
        FAISS_THROW_FMT(
                "search interrupted with: %s  %s",
                demangle_cpp_symbol(typeid(e).name()).c_str(),
                e.what());
    }
    if (InterruptCallback::is_interrupted()) {
        FAISS_THROW_MSG("computation interrupted");
    }
}

} // namespace ivf
} // namespace ccd
} // namespace faiss
