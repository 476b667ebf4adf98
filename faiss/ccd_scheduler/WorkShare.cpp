#include <faiss/ccd_scheduler/WorkShare.h>

#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/Task.h>
#include <faiss/ccd_scheduler/detail/Futex.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>

namespace faiss {
namespace ccd {

namespace {

// Polls of `remaining` before the caller sleeps: the units still running
// when it ran out of its own are usually near their end.
constexpr int kCallerSpins = 2000;
// A caller that is a worker of the pool naps this long between rounds of
// help_one (nobody would wake it for tasks reaching its own queue).
constexpr int64_t kWorkerNapNs = 50 * 1000;

/// Cursor: one group's next unclaimed unit. Its own line: its helpers
/// hammer it, other groups' helpers never touch it.
struct alignas(64) Cursor {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
};

/// ShareState: what helpers may touch after the call returned (see
/// "Lifetime" in WorkShare.h); shared by the call and its helpers.
struct ShareState {
    const RunnerFactory* factory; ///< valid only with a unit claimed
    std::unique_ptr<Cursor[]> cursors;
    int num_groups;
    int64_t submitted_ns = 0; ///< when the helpers were submitted

    alignas(64) std::atomic<int64_t> remaining{0};
    std::atomic<uint32_t> sleeping{0};
    std::atomic<int> helpers_with_units{0};
    FirstError error;

    /// claim: a unit of group g, or -1. relaxed: a unit index publishes
    /// nothing; the data a unit reads was written before the helpers were
    /// submitted (the pool's push is a release, its pop an acquire).
    int64_t claim(int g) {
        Cursor& c = cursors[g];
        if (c.next.load(std::memory_order_relaxed) >= c.end) {
            return -1; // spare the RMW (and the line) once it is drained
        }
        const int64_t u = c.next.fetch_add(1, std::memory_order_relaxed);
        return u < c.end ? u : -1;
    }

    /// done: unit finished (or skipped). D1-D2 of WorkShare.h. Release
    /// (in the seq_cst RMW): the unit's writes happen before the caller's
    /// load that sees zero.
    void done() {
        if (remaining.fetch_sub(1, std::memory_order_seq_cst) == 1) {
            if (sleeping.exchange(0, std::memory_order_seq_cst) == 1) {
                detail::futex_wake(&sleeping);
            }
        }
    }
};

/// participate: claim and run units of groups [first, first + span)
/// (modulo the number of groups) until none is left; returns how many it ran.
/// The runner dies before the last unit is reported done. A helper counts
/// itself in helpers_with_units on its first unit, before any done() of its
/// own, so the caller sees the count complete.
int64_t participate(ShareState& s, int first, int span, bool is_helper) {
    std::unique_ptr<UnitRunner> runner;
    int64_t ran = 0;
    int g = 0;
    auto next_unit = [&]() -> int64_t {
        for (; g < span; g++) {
            const int64_t u = s.claim((first + g) % s.num_groups);
            if (u >= 0) {
                return u;
            }
        }
        return -1;
    };
    int64_t unit = next_unit();
    if (unit >= 0 && is_helper) {
        s.helpers_with_units.fetch_add(1, std::memory_order_relaxed);
    }
    while (unit >= 0) {
        if (!s.error.failed()) {
            try {
                if (!runner) {
                    runner = s.factory->make_runner();
                }
                runner->run(unit);
            } catch (...) {
                s.error.keep(std::current_exception());
            }
        }
        ran++;
        const int64_t following = next_unit();
        if (following < 0) {
            runner.reset(); // while our last unit keeps the caller waiting
        }
        s.done();
        unit = following;
    }
    return ran;
}

void wait_all_done(Pool& pool, ShareState& s) {
    for (int i = 0; i < kCallerSpins; i++) {
        if (s.remaining.load(std::memory_order_acquire) == 0) {
            return;
        }
        detail::cpu_relax();
    }
    const bool is_worker = pool.current_worker() >= 0;
    for (;;) {
        s.sleeping.store(1, std::memory_order_seq_cst);         // C1
        if (s.remaining.load(std::memory_order_seq_cst) == 0) { // C2
            s.sleeping.store(0, std::memory_order_relaxed);
            return;
        }
        if (is_worker && pool.help_one()) {
            continue;
        }
        detail::futex_wait(&s.sleeping, 1, is_worker ? kWorkerNapNs : -1);
    }
}

} // namespace

ShareStats run_shared(
        Pool& pool,
        const std::vector<ShareGroup>& groups,
        int caller_first,
        const RunnerFactory& factory) {
    const int ng = int(groups.size());
    ShareStats stats;
    auto state = std::make_shared<ShareState>();
    state->factory = &factory;
    state->num_groups = ng;
    state->cursors.reset(new Cursor[ng > 0 ? ng : 1]);
    for (int g = 0; g < ng; g++) {
        if (groups[g].end < groups[g].begin || groups[g].helpers < 0) {
            throw std::invalid_argument(
                    "run_shared: a group has end < begin or helpers < 0");
        }
        state->cursors[g].next.store(
                groups[g].begin,
                std::memory_order_relaxed);
        state->cursors[g].end = groups[g].end;
        stats.units += groups[g].end - groups[g].begin;
    }
    if (stats.units == 0) {
        return stats;
    }
    state->remaining.store(stats.units, std::memory_order_relaxed);
    if (caller_first < 0 || caller_first >= ng) {
        caller_first = 0;
    }

    state->submitted_ns = steady_now_ns();
    for (int g = 0; g < ng; g++) {
        // More helpers than the group's units, or than the pool has
        // workers, would find nothing to take: they are not submitted (a
        // caller may ask for 2^30, and each would cost a submit).
        const int64_t useful = std::min<int64_t>(
                {int64_t(groups[g].helpers),
                 groups[g].end - groups[g].begin,
                 int64_t(pool.num_workers())});
        for (int64_t h = 0; h < useful; h++) {
            try {
                pool.submit(groups[g].id, [state, g, &pool] {
                    ShareState& s = *state;
                    pool.note_handoff(double(steady_now_ns() - s.submitted_ns));
                    participate(s, g, 1, true);
                });
            } catch (...) {
                break; // out of memory: the caller runs what is left
            }
            stats.helpers_submitted++;
        }
    }
    stats.units_by_caller = participate(*state, caller_first, ng, false);
    wait_all_done(pool, *state);
    stats.helpers_with_units =
            state->helpers_with_units.load(std::memory_order_relaxed);
    if (state->error.failed()) {
        std::rethrow_exception(state->error.take());
    }
    return stats;
}

} // namespace ccd
} // namespace faiss
