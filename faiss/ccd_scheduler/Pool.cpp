#include <faiss/ccd_scheduler/Pool.h>

#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/detail/FifoGate.h>
#include <faiss/ccd_scheduler/detail/ForkGeneration.h>
#include <faiss/ccd_scheduler/detail/Futex.h>
#include <faiss/ccd_scheduler/detail/Parker.h>
#include <faiss/ccd_scheduler/detail/RunQueue.h>
#include <faiss/ccd_scheduler/detail/SwapSlot.h>

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>

namespace faiss {
namespace ccd {

namespace {

/// Counter: a statistic written by one thread, read by any. The owner bumps
/// it with a load and a store (no RMW, no locked instruction); release so
/// that wait_idle(), which sums tasks_run with acquire loads, sees the work
/// a counted task did.
struct Counter {
    std::atomic<uint64_t> value{0};
    void bump() {
        value.store(
                value.load(std::memory_order_relaxed) + 1,
                std::memory_order_release);
    }
    uint64_t get() const {
        return value.load(std::memory_order_acquire);
    }
};

/// CurrentWorker: which pool and worker the calling thread is, if any.
struct CurrentWorker {
    const Pool* pool = nullptr;
    int index = -1;
    /// The running task was found after the worker parked (Pool::Wake).
    bool woke = false;
};
thread_local CurrentWorker tl_current;

/// tl_rotor_seed: a well-mixed per-thread number (submitter_rotor_seed).
/// It picks the thread's reader stripe and seeds tl_rotor, the thread's
/// round-robin position for the dispatcher: per thread, so submitters
/// never share (and bounce) a counter's cache line.
thread_local const uint32_t tl_rotor_seed = submitter_rotor_seed(
        std::hash<std::thread::id>()(std::this_thread::get_id()));
thread_local uint32_t tl_rotor = tl_rotor_seed;

// Pauses between two idle polls of the work loop. 16 PAUSEs are ~0.1 to
// 0.7 us depending on the core generation: short enough for the spin
// phase to catch a task within a microsecond or so.
constexpr int kPausesPerSpin = 16;

} // namespace

struct alignas(64) Pool::Worker {
    RunQueue queue;
    Parker parker;
    // Owner-only statistics, read by stats(): one line for all of them.
    alignas(64) Counter tasks_run;
    Counter local_pops;
    Counter intra_ccd_steals;
    Counter cross_ccd_steals;
    Counter parks;
    Counter uncaught_exceptions;
    // Owner-only state, never read by others.
    alignas(64) CrossCcdBackoff backoff;
    uint64_t rng;

    Worker(const PoolOptions& options, uint64_t seed)
            : queue(options.deque_capacity, options.ring_capacity),
              backoff(options.steal.max_backoff_shift),
              rng(seed) {}
};

struct Pool::CallerGate : detail::FifoGate {
    using FifoGate::FifoGate;
};

struct Pool::MappingSlot : detail::SwapSlot<Mapping> {
    using SwapSlot::SwapSlot;
};

Pool::Pool() : Pool(Topology::from_string("auto")) {}

Pool::Pool(const Topology& topology, PolicyKind policy, PoolOptions options)
        : topology_(topology),
          policy_(topology, policy, options.steal),
          options_(std::move(options)),
          mapping_(new MappingSlot(
                  options_.mapping ? options_.mapping
                                   : std::make_shared<HashMapping>())) {
    const int nw = topology_.num_workers();
    for (int w = 0; w < nw; w++) {
        const int cpu = topology_.cpu_of(w);
        if (cpu >= 0 && cpu < CPU_SETSIZE) {
            if (size_t(cpu) >= ccd_of_cpu_.size()) {
                ccd_of_cpu_.resize(size_t(cpu) + 1, -1);
            }
            ccd_of_cpu_[cpu] = topology_.ccd_of(w);
        }
    }
    for (auto& at : handoff_at_ns_) {
        at.store(steady_now_ns(), std::memory_order_relaxed);
    }
    if (options_.fifo_callers) {
        // One slot more than workers: a core whose caller left stays busy
        // while the next one wakes up (with as many slots as workers, a
        // core idles through every wake-up).
        caller_gate_.reset(new CallerGate(uint32_t(nw + 1)));
    }
    const unsigned hw = std::thread::hardware_concurrency();
    const bool oversubscribed = hw != 0 && unsigned(nw) > hw;
    spin_rounds_ = options_.spin_rounds >= 0 ? options_.spin_rounds
            : oversubscribed                 ? 2
                                             : 64;
    yield_spin_ns_ = 1000 *
            int64_t(options_.yield_spin_us >= 0 ? options_.yield_spin_us
                            : oversubscribed    ? 0
                                                : 100);

    workers_.reserve(nw);
    for (int w = 0; w < nw; w++) {
        workers_.emplace_back(new Worker(options_, worker_random_seed(w)));
    }
    detail::watch_forks();
    fork_generation_ = detail::fork_generation();
    threads_.reserve(nw);
    try {
        for (int w = 0; w < nw; w++) {
            threads_.emplace_back([this, w] {
                worker_main(w);
            });
        }
    } catch (...) {
        stop_.store(true, std::memory_order_seq_cst);
        for (auto& worker : workers_) {
            worker->parker.unpark();
        }
        for (std::thread& t : threads_) {
            t.join();
        }
        throw;
    }
}

Pool::~Pool() {
    if (current_worker() >= 0) {
        fprintf(stderr,
                "faiss_ccd: a Pool is being destroyed by one of its own "
                "tasks; that can never finish\n");
        std::abort();
    }
    wait_idle(); // in a fork() child, revives the workers first
    // seq_cst: pairs with P1-P3 of the parking protocol (see Pool.h).
    stop_.store(true, std::memory_order_seq_cst);
    for (auto& worker : workers_) {
        worker->parker.unpark();
    }
    for (std::thread& t : threads_) {
        t.join();
    }
}

void Pool::revive_after_fork() const {
    if (fork_generation_.load(std::memory_order_acquire) ==
        detail::fork_generation()) {
        return;
    }
    const_cast<Pool*>(this)->revive();
}

void Pool::revive() {
    // In a fork() child. Several threads of the child may get here at once:
    // one revives, the others wait for it. (No std::mutex: one copied from
    // the parent could be held by a thread the child does not have.)
    uint32_t expected = 0;
    while (!reviving_.compare_exchange_weak(
            expected,
            1,
            std::memory_order_acquire)) {
        expected = 0;
        sched_yield();
    }
    const uint64_t now = detail::fork_generation();
    if (fork_generation_.load(std::memory_order_relaxed) != now) {
        // The parent's threads do not exist here: their handles can be
        // neither joined nor detached, so they are kept, unused, forever.
        new std::vector<std::thread>(std::move(threads_));
        threads_.clear();
        // What the parent's threads were doing at the fork is not the
        // child's: tasks queued or running then belong to calls of threads
        // the child does not have, over memory those threads may have left
        // mid-update (a queue's indices, an overflow mutex, a search's
        // merge lock), and a task running then would never retire, so
        // wait_idle() could never return. The child drops them: every
        // worker gets a fresh queue, parker and counters. The old ones are
        // leaked, not destroyed (a mutex in them may be held).
        // test_Faults.cpp's ForkWhileSearching forks under 4 searching
        // threads; running the parent's tasks crashed or hung its children.
        for (size_t w = 0; w < workers_.size(); w++) {
            (void)workers_[w].release();
            workers_[w].reset(new Worker(options_, worker_random_seed(int(w))));
        }
        num_parked_.store(0, std::memory_order_relaxed);
        callers_.store(0, std::memory_order_relaxed);
        if (caller_gate_) {
            caller_gate_.release(); // may be held by a parent thread: kept
            caller_gate_.reset(new CallerGate(uint32_t(num_workers() + 1)));
        }
        for (int w = 0; w < num_workers(); w++) {
            threads_.emplace_back([this, w] {
                worker_main(w);
            });
        }
        fork_generation_.store(now, std::memory_order_release);
    }
    reviving_.store(0, std::memory_order_release);
}

int Pool::current_worker() const {
    return tl_current.pool == this ? tl_current.index : -1;
}

int Pool::caller_ccd() const {
    const int self = current_worker();
    if (self >= 0) {
        return topology_.ccd_of(self);
    }
    const int cpu = sched_getcpu();
    return cpu >= 0 && size_t(cpu) < ccd_of_cpu_.size() ? ccd_of_cpu_[cpu] : -1;
}

namespace {
/// tl_scope_depth: CallerScopes alive in this thread (any pool).
thread_local int tl_scope_depth = 0;
} // namespace

Pool::CallerScope::CallerScope(const Pool& pool)
        : pool_(pool), nested_(tl_scope_depth > 0), gate_(nullptr) {
    // Before the gate: in a fork() child the pool's gate is the parent's
    // until revive() replaces it, and its slots are held by threads the
    // child does not have (test_Fork.cpp's FifoCallersInAChild). The
    // acquire in revive_after_fork pairs with revive()'s release store,
    // so the caller_gate_ read below is the child's.
    pool.revive_after_fork();
    generation_ = pool.fork_generation_.load(std::memory_order_acquire);
    if (pool.caller_gate_ && !nested_ && pool.current_worker() < 0) {
        gate_ = pool.caller_gate_.get();
        gate_->enter();
    }
    tl_scope_depth++;
    // relaxed: a statistic for a policy; no data hangs on it. A nested
    // scope's thread is counted once, by its outermost scope.
    others_ = nested_
            ? std::max(0, pool.callers_.load(std::memory_order_relaxed) - 1)
            : pool.callers_.fetch_add(1, std::memory_order_relaxed);
    if (!nested_) {
        pool.callers_entered_.fetch_add(1, std::memory_order_relaxed);
    }
}

Pool::CallerScope::~CallerScope() {
    // A scope that a fork() carried into the child (the forking thread's
    // own) was counted in the parent's callers_, which revive() zeroed, and
    // holds a slot of the parent's gate, which revive() kept aside: it
    // uncounts itself only in its own generation, and leaves its own gate
    // (leaving the child's would admit one caller too many).
    if (!nested_ &&
        generation_ == pool_.fork_generation_.load(std::memory_order_acquire)) {
        pool_.callers_.fetch_sub(1, std::memory_order_relaxed);
    }
    tl_scope_depth--;
    if (gate_ != nullptr) {
        gate_->leave();
    }
}

int Pool::CallerScope::others_now() const {
    return std::max(0, pool_.callers_.load(std::memory_order_relaxed) - 1);
}

void Pool::note_handoff(double ns) const {
    // Up at once, down as a moving average over the last ~8 samples, from
    // the aged value. Up at once: aging lets a caller try a helper again
    // now and then; when that helper was dear, one sample must restore the
    // estimate, or every aged-down try would be followed by several more
    // dear ones while the average climbs back. Racing updates may drop one
    // sample, which an estimate can afford. relaxed: a statistic.
    constexpr double kWeight = 0.125;
    const Wake kind = tl_current.pool == this && !tl_current.woke
            ? Wake::spinning
            : Wake::parked;
    const int k = int(kind);
    const double old = handoff_ns(kind);
    const double sample = std::max(0.0, ns);
    handoff_ns_[k].store(
            sample > old ? sample : old + kWeight * (sample - old),
            std::memory_order_relaxed);
    handoff_at_ns_[k].store(steady_now_ns(), std::memory_order_relaxed);
}

double Pool::handoff_ns() const {
    return handoff_ns(
            num_spinning_.load(std::memory_order_relaxed) > 0 ? Wake::spinning
                                                              : Wake::parked);
}

double Pool::handoff_ns(Wake kind) const {
    // Aged: halved every kHandoffHalfLifeNs without a sample. A policy that
    // stops handing off because hand-offs were dear would otherwise never
    // measure them again once they got cheap.
    const int k = int(kind);
    const double v = handoff_ns_[k].load(std::memory_order_relaxed);
    const int64_t at = handoff_at_ns_[k].load(std::memory_order_relaxed);
    const double age = double(std::max<int64_t>(0, steady_now_ns() - at));
    return v * std::exp2(-age / kHandoffHalfLifeNs);
}

int Pool::pick_ccd(MappingId id) const {
    if (id == kLocalMappingId || !policy_.places_by_id()) {
        return -1;
    }
    return mapped_ccd(id);
}

int Pool::mapped_ccd(MappingId id) const {
    const int nccd = topology_.num_ccds();
    return mapping_->read(tl_rotor_seed, [id, nccd](const Mapping& mapping) {
        return mapping.pick_ccd(id, nccd);
    });
}

uint64_t Pool::set_mapping(std::shared_ptr<const Mapping> mapping) {
    return mapping_->replace(
            mapping ? std::move(mapping) : std::make_shared<HashMapping>());
}

std::shared_ptr<const Mapping> Pool::mapping() const {
    return mapping_->get();
}

uint64_t Pool::mapping_epoch() const {
    return mapping_->version();
}

void Pool::dispatch(TaskNode* task) {
    revive_after_fork();
    const int self = current_worker();
    const bool local = task->id == kLocalMappingId;
    const int ccd =
            policy_.places_by_id() && !local ? mapped_ccd(task->id) : -1;
    // The CPU is a hint (the thread may move right after), asked only when
    // the choice depends on it. Measured before the policy passed over the
    // caller's own worker: a helper sent there ran after the caller's scans,
    // not beside them (the caller ran nearly every unit itself).
    const int target = policy_.dispatch_target(
            topology_,
            ccd,
            local,
            self,
            tl_rotor,
            options_.pin_workers,
            [] {
                return sched_getcpu();
            });
    try {
        if (target == self) {
            workers_[target]->queue.push_local(task);
        } else {
            workers_[target]->queue.push_external(task);
        }
    } catch (...) {
        // Out of memory growing an overflow list: the task was not queued
        // (nor counted), and is the submitter's to report.
        delete task;
        throw;
    }
    wake_for(target);
}

void Pool::wake_for(int target) {
    // S2: orders the push before the parker loads below (Dekker with P1-P3).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    Worker& t = *workers_[target];
    if (t.parker.is_parked() && t.parker.unpark()) {
        return;
    }
    // Everything below is opportunistic: a helper for a busy target.
    if (num_parked_.load(std::memory_order_relaxed) == 0) {
        return;
    }
    policy_.wake_helper(
            topology_,
            target,
            tl_rotor,
            [this](int v) {
                return workers_[v]->parker.unpark();
            },
            [this](int c) {
                return ccd_backlog(c);
            });
}

int64_t Pool::ccd_backlog(int ccd) const {
    int64_t total = 0;
    const int first = topology_.first_worker(ccd);
    for (int i = 0; i < topology_.ccd_size(ccd); i++) {
        total += workers_[first + i]->queue.size_estimate();
    }
    return total;
}

TaskNode* Pool::find_task(int w, bool ignore_backoff) {
    Worker& me = *workers_[w];
    if (TaskNode* task = me.queue.pop_local()) {
        me.local_pops.bump();
        return task;
    }
    const StealOutcome<TaskNode*> got = policy_.steal_round<TaskNode*>(
            topology_,
            w,
            me.rng,
            me.backoff,
            ignore_backoff,
            [this](int v) {
                return workers_[v]->queue.steal();
            },
            [this](int c) {
                return ccd_backlog(c);
            });
    if (got.victim >= 0) {
        if (got.cross_ccd) {
            me.cross_ccd_steals.bump();
        } else {
            me.intra_ccd_steals.bump();
        }
    }
    return got.item;
}

void Pool::run_task(int w, TaskNode* task) {
    Worker& me = *workers_[w];
    TaskCompletion* completion = task->completion;
    if (completion == nullptr) {
        try {
            task->run();
        } catch (...) {
            me.uncaught_exceptions.bump();
        }
    } else if (completion->should_run()) {
        try {
            task->run();
        } catch (...) {
            completion->task_threw(std::current_exception());
        }
    }
    // The callable and its captures die before anyone can see the task as
    // finished: a waiter may free what they refer to as soon as it returns.
    delete task;
    if (completion != nullptr) {
        completion->task_done(); // its last access: it may go right after
    }
    // Counted last, so that wait_idle() (and ~Pool, ~Runtime) wait for the
    // completion too, and for any task it submitted.
    me.tasks_run.bump();
}

bool Pool::help_one() {
    const int w = current_worker();
    if (w < 0) {
        return false;
    }
    TaskNode* task = find_task(w, false);
    if (task == nullptr) {
        return false;
    }
    run_task(w, task);
    return true;
}

void Pool::worker_main(int w) {
    tl_current.pool = this;
    tl_current.index = w;
    const int cpu = topology_.cpu_of(w);
    if (options_.pin_workers && cpu >= 0 && cpu < CPU_SETSIZE) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        // A CPU outside our affinity mask makes this fail: the worker then
        // floats, which is what an emulated topology wants anyway.
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    const bool yield_when_spinning =
            topology_.num_workers() > int(std::thread::hardware_concurrency());
    Worker& me = *workers_[w];
    bool parked = false; // since the last task ran (CurrentWorker::woke)
    for (;;) {
        TaskNode* task = find_task(w, false);
        const bool idle = task == nullptr;
        if (idle) {
            num_spinning_.fetch_add(1, std::memory_order_relaxed);
        }
        for (int i = 0; task == nullptr && i < spin_rounds_; i++) {
            if (yield_when_spinning) {
                sched_yield();
            } else {
                for (int k = 0; k < kPausesPerSpin; k++) {
                    detail::cpu_relax();
                }
            }
            task = find_task(w, false);
        }
        if (task == nullptr && yield_spin_ns_ > 0) {
            const auto until = std::chrono::steady_clock::now() +
                    std::chrono::nanoseconds(yield_spin_ns_);
            do {
                sched_yield();
                task = find_task(w, false);
            } while (task == nullptr &&
                     std::chrono::steady_clock::now() < until &&
                     !stop_.load(std::memory_order_relaxed));
        }
        if (idle) {
            num_spinning_.fetch_sub(1, std::memory_order_relaxed);
        }
        if (task != nullptr) {
            tl_current.woke = parked;
            run_task(w, task);
            parked = false;
            continue;
        }
        // Parking protocol, P1-P5 (see Pool.h).
        me.parker.prepare();                                 // P1
        num_parked_.fetch_add(1, std::memory_order_seq_cst); // P2
        std::atomic_thread_fence(std::memory_order_seq_cst); // P3
        if (stop_.load(std::memory_order_relaxed)) {
            me.parker.cancel();
            num_parked_.fetch_sub(1, std::memory_order_relaxed);
            break;
        }
        task = find_task(w, true); // P4
        if (task == nullptr) {     // P5
            me.parks.bump();
            me.parker.wait();
            parked = true;
        } else {
            me.parker.cancel();
        }
        num_parked_.fetch_sub(1, std::memory_order_relaxed);
        me.backoff.reset();
        if (task != nullptr) {
            tl_current.woke = parked;
            run_task(w, task);
            parked = false;
        }
    }
    tl_current = CurrentWorker();
}

void Pool::wait_idle() const {
    if (current_worker() >= 0) {
        throw std::logic_error(
                "Pool::wait_idle called from one of the pool's own tasks");
    }
    revive_after_fork();
    // Idle when every task ever pushed has retired. Sum the retired counts
    // first, then the pushed counts: a task counted as retired was pushed
    // before it retired, so it is in the later sum too; equal sums then
    // mean nothing pushed so far is still queued or running (and a running
    // task is the only thing that can push more once outsiders stopped).
    int naps = 0;
    for (;;) {
        uint64_t retired = 0;
        for (const auto& worker : workers_) {
            retired += worker->tasks_run.get();
        }
        uint64_t pushed = 0;
        for (const auto& worker : workers_) {
            pushed += worker->queue.pushes_total();
        }
        if (pushed == retired) {
            return;
        }
        if (naps++ < 100) {
            sched_yield();
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }
}

PoolStats Pool::stats() const {
    PoolStats s;
    s.mapping_epoch = mapping_epoch();
    s.callers = callers_entered_.load(std::memory_order_relaxed);
    s.workers.resize(topology_.num_workers());
    for (int w = 0; w < topology_.num_workers(); w++) {
        const Worker& src = *workers_[w];
        WorkerStats& dst = s.workers[w];
        dst.worker = w;
        dst.ccd = topology_.ccd_of(w);
        dst.cpu = topology_.cpu_of(w);
        dst.tasks_run = src.tasks_run.get();
        dst.local_pops = src.local_pops.get();
        dst.intra_ccd_steals = src.intra_ccd_steals.get();
        dst.cross_ccd_steals = src.cross_ccd_steals.get();
        dst.parks = src.parks.get();
        dst.uncaught_exceptions = src.uncaught_exceptions.get();
        dst.queued = src.queue.size_estimate();
    }
    return s;
}

} // namespace ccd
} // namespace faiss
