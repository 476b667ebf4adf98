/**
 * Pool: CCD-aware work-stealing workers, one per core, pinned.
 *
 * A task is submitted with the MappingId of the memory it touches. The
 * dispatcher resolves the id to a CCD through the pool's Mapping
 * (pick_ccd), then to one worker of that CCD (round-robin per submitting
 * thread), and pushes the task into that worker's run queue. Every choice
 * of whom (target, helper to wake, victim order) is StealPolicy's
 * (dispatch_target, wake_helper, steal_round); the pool supplies the
 * mechanism: queues, parking, counters. Workers run their
 * own queue, then steal as the StealPolicy orders, then spin, then park. The
 * pool knows nothing of FAISS.
 *
 * Work loop of worker w (find_task):
 *   1. pop its own queue (own deque LIFO, then its submit ring, then its
 *      overflow);
 *   2. steal from its near victims (ccd: CCD siblings; flat: everyone), in
 *      a fresh random order each round;
 *   3. ccd policy only, and only when step 2 found every sibling empty:
 *      steal from a remote CCD whose backlog reaches the threshold, unless
 *      the exponential backoff after failed cross rounds says skip;
 *   4. none found: spin (re-running 1-3) with PAUSEs, then with
 *      sched_yield() for yield_spin_us, then park.
 *
 * Parking protocol (no lost wake-up). Worker w, to sleep:
 *   P1  parker[w].prepare()            seq_cst store  parked = 1
 *   P2  num_parked_.fetch_add(1)       seq_cst RMW
 *   P3  fence(seq_cst); check stop_
 *   P4  find_task(w) once more (own queue, siblings, remote CCDs)
 *   P5  found: cancel and run it; else parker[w].wait().
 * A submitter, after pushing task T into worker t's queue:
 *   S1  push (release store that publishes T)
 *   S2  fence(seq_cst)
 *   S3  if parker[t].is_parked(): unpark(t)
 *       else if num_parked_ > 0: wake one parked worker that may steal T.
 * Why no task is stranded: by the seq_cst total order on P1/P3 and S2/S3,
 * either S3 sees parker[t] == 1 (and wakes t), or P4 of t runs after S1 and
 * finds T. So the worker T was pushed to is always awake or woken; wakes of
 * other workers (siblings, remote CCDs) are opportunistic, for latency, and
 * a missed one costs time, not a task. Stop uses the same pairing: the
 * destructor stores stop_ (seq_cst) and then unparks everybody.
 *
 * fork(): a child that uses a pool its parent had (submit, wait_idle, its
 * destruction) first starts that pool's workers again, once, on empty
 * queues: tasks queued or running at the fork were the parent's threads'
 * and are dropped in the child (revive_after_fork says why), so a task
 * the forking thread itself left queued, and whatever waits for it in the
 * child (a TaskGroup, a future), never completes there. Fork before
 * submitting, or after waiting. (Stock FAISS's OpenMP pool hangs in such
 * a child instead.)
 *
 * Destruction: ~Pool() waits until the pool is idle (every submitted task,
 * including tasks submitted by tasks, has run), then stops and joins the
 * workers. Pending tasks are therefore run, never dropped. Submitting from
 * another thread concurrently with the destructor is a caller bug, as is
 * destroying a pool from one of its own tasks (that aborts with a message).
 *
 * Completion. A task submitted with a TaskCompletion reports to it
 * (Task.h); TaskGroup is built on that and on help_one(), the pool's only
 * two hooks for waiting: the pool knows nothing of groups.
 *
 * Thread contract: submit(), stats(), pick_ccd(), help_one(), wait_idle()
 * from any thread, including the pool's own workers (wait_idle() excepted:
 * not from a worker). Construction and destruction from one thread.
 */

#pragma once

#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/ccd_scheduler/MappingId.h>
#include <faiss/ccd_scheduler/PoolStats.h>
#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/Task.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace faiss {
namespace ccd {

namespace detail {
class FifoGate;
} // namespace detail

/// PoolOptions: construction-time knobs besides topology and policy.
struct PoolOptions {
    StealConfig steal;       ///< cross-CCD threshold and backoff
    bool pin_workers = true; ///< pin workers that have a CPU
    /// spin_rounds: find_task rounds an idle worker polls (with PAUSEs in
    /// between) before it yields; -1 picks 64 when every worker has a
    /// core, 2 when oversubscribed.
    int spin_rounds = -1;
    /// yield_spin_us: then, for this long, it polls with sched_yield() in
    /// between (so a client thread that shares its core runs first), and
    /// only then parks. A closed-loop client's next query usually comes
    /// within it, to an awake worker (OpenMP's threads spin likewise). -1
    /// picks 100 when every worker has a core, 0 when oversubscribed.
    int yield_spin_us = -1;
    /// fifo_callers: CallerScope lets at most num_workers + 1 outside
    /// callers in at once, in arrival order (see there). Off by default:
    /// it cuts the tail latency of more closed-loop clients than workers,
    /// but costs throughput (a sleep and a wake-up per search).
    bool fifo_callers = false;
    uint32_t deque_capacity = 4096; ///< per worker, a power of two
    uint32_t ring_capacity = 1024;  ///< per worker, a power of two
    /// mapping: MappingId -> CCD; nullptr = HashMapping.
    std::shared_ptr<const Mapping> mapping;
};

class Pool {
   public:
    /// Pool: topology from FAISS_CCD_TOPOLOGY or hwloc, policy ccd.
    Pool();
    explicit Pool(
            const Topology& topology,
            PolicyKind policy = PolicyKind::ccd,
            PoolOptions options = PoolOptions());
    ~Pool();

    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    /// submit: run f() once on some worker. Exceptions f throws are counted
    /// (WorkerStats::uncaught_exceptions) and dropped; use a TaskGroup to
    /// get them back. Any thread. If the submission itself fails (out of
    /// memory, a callable whose copy throws) it throws, and f never runs.
    template <class F>
    void submit(MappingId id, F&& f) {
        submit(id, nullptr, std::forward<F>(f));
    }

    /// submit: run f() once on some worker and report to `completion`
    /// (nullptr: as above), which must stay alive until its done() for
    /// this task. Any thread.
    template <class F>
    void submit(MappingId id, TaskCompletion* completion, F&& f) {
        dispatch(new TaskOf<std::decay_t<F>>(
                id,
                completion,
                std::forward<F>(f)));
    }

    /// help_one: a worker of this pool that waits for something runs one
    /// task it finds (its own queue first, then steals in the work loop's
    /// order) and returns true; false when it found none, and always for a
    /// thread that is not a worker of this pool.
    bool help_one();

    /// wait_idle: block until every task submitted so far, and every task
    /// those submit, has finished. Not from a worker of this pool.
    void wait_idle() const;

    /// pick_ccd: the CCD tasks with this id go to under this pool's policy
    /// and current mapping (-1 for ids the policy does not place:
    /// flat_steal, round_robin, kLocalMappingId).
    int pick_ccd(MappingId id) const;

    /// current_worker: the index of the calling thread in this pool, or -1.
    int current_worker() const;

    PoolStats stats() const;
    const Topology& topology() const {
        return topology_;
    }
    PolicyKind policy() const {
        return policy_.kind();
    }
    int num_workers() const {
        return topology_.num_workers();
    }

    // ------------------------------------------------ load signals
    // Measured, approximate values for the callers' own policies
    // (HelperPlan): which CCD a caller runs on, how many callers are
    // running work beside the pool, what a hand-off to a worker costs now.

    /// caller_ccd: the CCD of the CPU the calling thread runs on now (its
    /// worker's CCD for a worker), or -1 when that CPU is not one of the
    /// topology's (emulated topologies, a caller outside the pool's CPUs).
    int caller_ccd() const;

    /// CallerScope: while alive, counts the calling thread among the
    /// pool's active callers (threads running work of their own beside
    /// the pool, WorkShare's callers). With PoolOptions::fifo_callers, at
    /// most num_workers() + 1 outside threads are active at once, the others
    /// waiting (asleep) to enter in the order they came: concurrent
    /// searches then run first come, first served. A worker of the pool,
    /// or a thread already inside a scope, enters at once (waiting could
    /// deadlock on itself), and a nested scope counts its thread once.
    /// Any thread. Across fork(): a child's first scope revives the pool
    /// before it enters the gate (the parent's, copied, is held by threads
    /// the child does not have); a scope that outlives a fork in the
    /// forking thread leaves the gate it entered, not the child's new one,
    /// and uncounts itself only in the generation it counted itself in.
    class CallerScope {
       public:
        explicit CallerScope(const Pool& pool);
        ~CallerScope();
        CallerScope(const CallerScope&) = delete;
        CallerScope& operator=(const CallerScope&) = delete;
        /// others: active callers besides this one, when it entered.
        int others() const {
            return others_;
        }
        /// others_now: active callers besides this one, now (relaxed: a
        /// statistic for a policy, as at entry).
        int others_now() const;

       private:
        const Pool& pool_;
        bool nested_; ///< inside another scope of this thread
        /// gate_: the gate entered (null: none); kept, not re-read from the
        /// pool, which a fork() child gives a new one.
        detail::FifoGate* gate_;
        uint64_t generation_; ///< the pool's fork generation at entry
        int others_;
    };

    /// Wake: how the worker that ran a task came to it. A hand-off to a
    /// worker that is awake and looking for work (spinning) costs about a
    /// cache-line transfer; to a parked one, a futex wake-up and a context
    /// switch: two estimates, so that neither hides the other.
    enum class Wake { spinning = 0, parked = 1 };

    /// note_handoff: a task started `ns` nanoseconds after it was
    /// submitted; folded into the estimate of the calling worker's Wake
    /// (parked when it parked before finding this task; a thread outside
    /// the pool notes a parked sample). Any thread.
    void note_handoff(double ns) const;
    /// handoff_ns: the estimate for a task submitted now: the spinning one
    /// while some worker spins, else the parked one.
    double handoff_ns() const;
    /// handoff_ns(kind): the noted submit-to-start delays of that kind
    /// (kInitialHandoffNs[kind] before the first): a sample above the
    /// estimate replaces it, one below moves it as a moving average;
    /// halved for every kHandoffHalfLifeNs since its last sample.
    double handoff_ns(Wake kind) const;
    static constexpr double kInitialHandoffNs[2] = {2000, 20000};
    static constexpr double kHandoffHalfLifeNs = 10e6;

    /// set_mapping: publish a new MappingId -> CCD mapping (nullptr: back
    /// to HashMapping) and return its epoch. Submissions that start after
    /// the call use it; tasks already queued stay where they are. The old
    /// mapping is released once no submission still reads it (the call
    /// waits for that, briefly: a reader holds it for one lookup). Any
    /// thread; calls are serialised. Off the submit path.
    uint64_t set_mapping(std::shared_ptr<const Mapping> mapping);

    /// mapping: the current mapping (a shared reference).
    std::shared_ptr<const Mapping> mapping() const;

    /// mapping_epoch: 0 at construction, +1 per set_mapping(). The only
    /// place the epoch is kept.
    uint64_t mapping_epoch() const;

   private:
    struct Worker;
    struct MappingSlot;
    struct CallerGate;

    /// dispatch: place and push a task, then wake whoever should run it.
    void dispatch(TaskNode* task);
    /// wake_for: S2-S3 of the parking protocol for a task pushed to `target`.
    void wake_for(int target);
    /// find_task: steps 1-3 of the work loop; nullptr if nothing was found.
    TaskNode* find_task(int w, bool ignore_backoff);
    /// run_task: run, account, delete; report to the completion last.
    void run_task(int w, TaskNode* task);
    void worker_main(int w);
    int64_t ccd_backlog(int ccd) const;
    /// revive_after_fork: in a fork() child, start the pool's workers
    /// again (the parent's are not there) before anything waits for them;
    /// a relaxed load and a compare otherwise. See detail/ForkGeneration.h.
    void revive_after_fork() const;
    void revive();
    /// mapped_ccd: the current mapping's CCD for `id` (a read of mapping_).

    int mapped_ccd(MappingId id) const;

    Topology topology_;
    StealPolicy policy_;
    PoolOptions options_;
    int spin_rounds_;
    int64_t yield_spin_ns_;

    // The mapping: every submit that places by id reads it without a lock
    // (detail/SwapSlot.h has the protocol and its proof); its version is
    // the mapping epoch. Behind a pointer so that Pool.h includes no detail
    // header.
    std::unique_ptr<MappingSlot> mapping_;

    std::vector<std::unique_ptr<Worker>> workers_;
    std::vector<std::thread> threads_;

    // Written on every park and wake, read by submitters only after their
    // own target turned out to be awake: its own line.
    alignas(64) std::atomic<int> num_parked_{0};
    // Load signals: written once per share or helper, not per task.
    alignas(64) mutable std::atomic<int> callers_{0};
    mutable std::atomic<uint64_t> callers_entered_{0}; ///< PoolStats::callers
    mutable std::atomic<double> handoff_ns_[2] = {
            {kInitialHandoffNs[0]},
            {kInitialHandoffNs[1]}};
    mutable std::atomic<int64_t> handoff_at_ns_[2] = {}; ///< steady clock
    /// Workers awake without a task (spinning before they park); a hint
    /// for handoff_ns(), written on each idle spell, not per task.
    alignas(64) std::atomic<int> num_spinning_{0};
    std::vector<int> ccd_of_cpu_;             ///< by CPU number; -1: not ours
    std::unique_ptr<CallerGate> caller_gate_; ///< null: no fifo_callers
    // Fork: the generation the workers were started in; 1 while one
    // thread of a child revives them.
    std::atomic<uint64_t> fork_generation_{0};
    std::atomic<uint32_t> reviving_{0};
    alignas(64) std::atomic<bool> stop_{false};
};

} // namespace ccd
} // namespace faiss
