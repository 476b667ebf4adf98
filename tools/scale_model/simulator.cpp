#include "simulator.h"

#include "l3_cache.h"
#include "sim_clock.h"

#include <faiss/ccd_scheduler/Topology.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>

namespace sim {

using faiss::ccd::CrossCcdBackoff;
using faiss::ccd::PolicyKind;
using faiss::ccd::StealOutcome;
using faiss::ccd::StealPolicy;
using faiss::ccd::Topology;

namespace {

/// Ref: a queued task as the policy sees it: (generation, slot) + 1, so 0
/// is "nothing" and a stale reference is caught.
using Ref = int64_t;
constexpr int kSlotBits = 26;

struct SimTask {
    TaskSpec spec;
    int query = -1;
    uint32_t gen = 0;
    enum : uint8_t { free_slot, queued, running } state = free_slot;
    bool streams_dram = false;
    uint64_t bytes = 0; ///< read by the task (set when it starts)
};

struct Query {
    double start_ns = 0;
    int remaining = 0;
    int client = 0;
};

struct Worker {
    std::deque<Ref> queue;
    uint64_t rng = 0;
    CrossCcdBackoff backoff{6};
    enum : uint8_t { idle, busy, parked } state = idle;
    uint64_t poll_gen = 0;
    int spin_left = 0;
    int task = -1; ///< slot running
};

struct Client {
    Rng rng{0};
    uint32_t rotor = 0;
    uint64_t turn = 0;
    bool done = false;
};

class Engine {
   public:
    Engine(const SimConfig& c, const Workload& w)
            : cfg_(c),
              wl_(w),
              nccd_(c.enabled_ccds > 0 ? c.enabled_ccds : c.part.ccds),
              topo_(Topology::from_spec(
                      std::to_string(nccd_) + "x" +
                      std::to_string(c.part.cores_per_ccd))),
              policy_(topo_, policy_kind(), steal_config()),
              dram_(c.part),
              placement_(
                      c.variant,
                      monitor_config(),
                      nccd_,
                      c.part.l3_bytes,
                      w),
              end_ns_((c.warmup_s + c.measure_s) * 1e9),
              measure_from_ns_(c.warmup_s * 1e9) {
        for (int i = 0; i < nccd_; i++) {
            l3_.emplace_back(c.part.l3_bytes);
        }
        workers_.resize(topo_.num_workers());
        for (int i = 0; i < topo_.num_workers(); i++) {
            workers_[i].rng = faiss::ccd::worker_random_seed(i);
            workers_[i].backoff =
                    CrossCcdBackoff(steal_config().max_backoff_shift);
            workers_[i].spin_left = 0;
            clock_.at(0, EventKind::worker_poll, i, 0);
        }
        clients_.resize(
                c.clients > 0 ? c.clients
                              : topo_.num_workers() * c.clients_per_core);
        const double client_ns =
                double(w.client_bytes()) * c.costs.l3_ns_per_byte;
        for (size_t i = 0; i < clients_.size(); i++) {
            clients_[i].rng = Rng(c.seed * 1000003 + i);
            clients_[i].rotor =
                    faiss::ccd::submitter_rotor_seed(c.seed * 131 + i);
            clients_[i].turn = i;
            client_started_.push_back(0);
            // Staggered by a fraction of the coarse quantizer's time, so
            // that clients do not all submit at the same instant.
            clock_.at(
                    client_ns * (1.0 + double(i) / clients_.size()),
                    EventKind::client_issue,
                    int(i));
        }
        clock_.at(c.tick_s * 1e9, EventKind::monitor_tick, 0);
        client_ns_ = client_ns;
    }

    SimStats run();

   private:
    PolicyKind policy_kind() const {
        switch (cfg_.variant) {
            case Variant::V0:
                return PolicyKind::round_robin;
            case Variant::V1:
                return PolicyKind::flat_steal;
            default:
                return PolicyKind::ccd;
        }
    }
    faiss::ccd::StealConfig steal_config() const {
        faiss::ccd::StealConfig s = cfg_.steal;
        if (cfg_.variant == Variant::V3) {
            s.cross_ccd_threshold = cfg_.v3_cross_ccd_threshold >= 0
                    ? cfg_.v3_cross_ccd_threshold
                    : cfg_.part.cores_per_ccd;
        }
        return s;
    }
    faiss::ccd::MonitorConfig monitor_config() const {
        faiss::ccd::MonitorConfig m = cfg_.monitor;
        if (cfg_.variant == Variant::V3) {
            m.fast_window_s = cfg_.v3_fast_window_s;
            m.bucket_s = std::min(m.bucket_s, m.fast_window_s / 4);
        }
        return m;
    }
    /// shared_queue: V0 on a streaming (IVF) workload: OpenMP's dynamic
    /// schedule. V0 on HNSW is the round_robin policy.
    bool shared_queue() const {
        return cfg_.variant == Variant::V0 && !wl_.random_access();
    }
    bool measuring() const {
        return clock_.now_ns() >= measure_from_ns_ && clock_.now_ns() < end_ns_;
    }

    int new_slot();
    Ref ref_of(int slot) const {
        return (Ref(tasks_[slot].gen) << kSlotBits | slot) + 1;
    }
    /// take: the slot of a queued reference, or -1 (counted) if stale.
    int take(Ref r);
    void issue(int client);
    void dispatch(int client, int slot);
    void wake(int w);
    void poll(int w);
    void start(int w, int slot, bool stolen_cross, double wait_ns);
    void finish(int w);
    int64_t ccd_backlog(int c) const {
        int64_t b = 0;
        for (int i = 0; i < topo_.ccd_size(c); i++) {
            b += int64_t(workers_[topo_.first_worker(c) + i].queue.size());
        }
        return b;
    }

    const SimConfig& cfg_;
    const Workload& wl_;
    int nccd_;
    Topology topo_;
    StealPolicy policy_;
    Dram dram_;
    Placement placement_;
    SimClock clock_;
    std::vector<L3Cache> l3_;
    std::vector<Worker> workers_;
    std::vector<Client> clients_;
    std::vector<double> client_started_;
    std::vector<SimTask> tasks_;
    std::vector<int> free_slots_;
    std::vector<Query> queries_;
    std::vector<int> free_queries_;
    std::deque<Ref> shared_;
    double shared_free_at_ = 0;
    double end_ns_;
    double measure_from_ns_;
    double client_ns_ = 0;
    double busy_ns_ = 0;
    std::vector<TaskSpec> specs_;
    std::vector<double> latencies_;
    SimStats st_;
};

int Engine::new_slot() {
    if (free_slots_.empty()) {
        tasks_.emplace_back();
        return int(tasks_.size() - 1);
    }
    const int s = free_slots_.back();
    free_slots_.pop_back();
    return s;
}

int Engine::take(Ref r) {
    const Ref v = r - 1;
    const int slot = int(v & ((Ref(1) << kSlotBits) - 1));
    if (slot >= int(tasks_.size()) ||
        tasks_[slot].gen != uint32_t(v >> kSlotBits) ||
        tasks_[slot].state != SimTask::queued) {
        st_.exactly_once_violations++;
        return -1;
    }
    return slot;
}

void Engine::issue(int c) {
    Client& client = clients_[c];
    if (clock_.now_ns() >= end_ns_) {
        client.done = true;
        return;
    }
    wl_.query(client.rng, clock_.now(), &specs_);
    int q;
    if (free_queries_.empty()) {
        queries_.emplace_back();
        q = int(queries_.size() - 1);
    } else {
        q = free_queries_.back();
        free_queries_.pop_back();
    }
    queries_[q] = Query{client_started_[c], int(specs_.size()), c};
    for (const TaskSpec& spec : specs_) {
        const int slot = new_slot();
        SimTask& t = tasks_[slot];
        t.spec = spec;
        t.query = q;
        t.gen++;
        t.state = SimTask::queued;
        st_.tasks_submitted++;
        dispatch(c, slot);
    }
}

void Engine::dispatch(int c, int slot) {
    Client& client = clients_[c];
    if (shared_queue()) {
        shared_.push_back(ref_of(slot));
        // OpenMP's idle threads: the lowest-numbered sleeping one wakes.
        for (int w = 0; w < int(workers_.size()); w++) {
            if (workers_[w].state == Worker::parked) {
                wake(w);
                break;
            }
        }
        return;
    }
    const int ccd = placement_.ccd_of(tasks_[slot].spec.item, client.turn++);
    const int target = policy_.dispatch_target(
            topo_,
            ccd,
            false,
            -1,
            client.rotor,
            false,
            [] {
                return -1;
            });
    if (st_.first_targets.size() < 256) {
        st_.first_targets.push_back(target);
    }
    workers_[target].queue.push_back(ref_of(slot));
    if (workers_[target].state == Worker::parked) {
        wake(target);
        return;
    }
    policy_.wake_helper(
            topo_,
            target,
            client.rotor,
            [this](int v) {
                if (workers_[v].state != Worker::parked) {
                    return false;
                }
                wake(v);
                return true;
            },
            [this](int cc) {
                return ccd_backlog(cc);
            });
}

void Engine::wake(int w) {
    Worker& k = workers_[w];
    k.state = Worker::idle;
    k.spin_left = cfg_.spin_polls;
    k.backoff.reset();
    clock_.at(
            clock_.now_ns() + cfg_.wake_ns,
            EventKind::worker_poll,
            w,
            ++k.poll_gen);
}

void Engine::poll(int w) {
    Worker& me = workers_[w];
    int slot = -1;
    bool cross = false;
    double wait_ns = 0;
    if (shared_queue()) {
        if (!shared_.empty()) {
            slot = take(shared_.front());
            shared_.pop_front();
            // The queue's line moves to this core: one transfer at a time.
            const double op = nccd_ > 1 ? cfg_.part.cross_ccd_ns
                                        : cfg_.part.l3_latency_ns;
            const double at = std::max(clock_.now_ns(), shared_free_at_);
            shared_free_at_ = at + op;
            wait_ns = shared_free_at_ - clock_.now_ns();
        }
    } else if (!me.queue.empty()) {
        slot = take(me.queue.front());
        me.queue.pop_front();
        if (measuring()) {
            st_.local_pops++;
        }
    } else {
        const StealOutcome<Ref> got = policy_.steal_round<Ref>(
                topo_,
                w,
                me.rng,
                me.backoff,
                me.spin_left == 0,
                [this](int v) -> Ref {
                    std::deque<Ref>& q = workers_[v].queue;
                    if (q.empty()) {
                        return 0;
                    }
                    const Ref r = q.front();
                    q.pop_front();
                    return r;
                },
                [this](int c) {
                    return ccd_backlog(c);
                });
        if (got.victim >= 0) {
            slot = take(got.item);
            cross = got.cross_ccd;
            if (st_.first_victims.size() < 256) {
                st_.first_victims.push_back(got.victim);
            }
            if (measuring()) {
                (cross ? st_.cross_steals : st_.intra_steals)++;
            }
        }
    }
    if (slot >= 0) {
        start(w, slot, cross, wait_ns);
        return;
    }
    if (me.spin_left > 0) {
        me.spin_left--;
        clock_.at(
                clock_.now_ns() + cfg_.poll_ns,
                EventKind::worker_poll,
                w,
                ++me.poll_gen);
        return;
    }
    me.state = Worker::parked;
    me.backoff.reset();
    if (measuring()) {
        st_.parks++;
    }
}

void Engine::start(int w, int slot, bool stolen_cross, double wait_ns) {
    Worker& me = workers_[w];
    SimTask& t = tasks_[slot];
    t.state = SimTask::running;
    me.state = Worker::busy;
    me.task = slot;
    me.poll_gen++; // polls already scheduled are void
    L3Cache& l3 = l3_[topo_.ccd_of(w)];
    const uint32_t item = t.spec.item;
    uint64_t hit = 0, miss = 0, hit_blocks = 0, miss_blocks = 0;
    for (uint32_t i = 0; i < t.spec.nblocks; i++) {
        const uint32_t b = wl_.random_access() ? wl_.block_of(t.spec, i) : i;
        const uint32_t bytes = wl_.block_bytes(item, b);
        if (l3.read(item, b, bytes)) {
            hit += bytes;
            hit_blocks++;
        } else {
            miss += bytes;
            miss_blocks++;
        }
    }
    st_.bytes_requested += hit + miss;
    st_.bytes_served_l3 += hit;
    st_.bytes_served_dram += miss;
    double dram_per_byte = cfg_.costs.dram_ns_per_byte;
    t.streams_dram = miss > 0;
    if (t.streams_dram) {
        dram_per_byte = dram_.start_stream(dram_per_byte);
    }
    double ns = cfg_.costs.task_overhead_ns +
            double(hit) * cfg_.costs.l3_ns_per_byte +
            double(miss) * dram_per_byte;
    if (wl_.random_access()) {
        ns += double(hit_blocks) * cfg_.part.l3_latency_ns +
                double(miss_blocks) * cfg_.part.dram_latency_ns;
    }
    if (stolen_cross) {
        ns += cfg_.part.cross_ccd_ns;
    }
    ns += wait_ns; // V0: waiting for the shared queue's line
    t.bytes = hit + miss;
    if (measuring()) {
        st_.tasks++;
        st_.l3_bytes += hit;
        st_.dram_bytes += miss;
        busy_ns_ += ns;
    }
    clock_.at(clock_.now_ns() + ns, EventKind::task_done, w);
}

void Engine::finish(int w) {
    Worker& me = workers_[w];
    const int slot = me.task;
    SimTask& t = tasks_[slot];
    if (t.streams_dram) {
        dram_.end_stream();
    }
    placement_.record(t.spec.item, t.bytes);
    t.state = SimTask::free_slot;
    free_slots_.push_back(slot);
    st_.tasks_completed++;
    Query& q = queries_[t.query];
    if (--q.remaining == 0) {
        if (measuring()) {
            st_.queries++;
            latencies_.push_back(clock_.now_ns() - q.start_ns);
        }
        const int c = q.client;
        free_queries_.push_back(t.query);
        client_started_[c] = clock_.now_ns();
        clock_.at(clock_.now_ns() + client_ns_, EventKind::client_issue, c);
    }
    me.task = -1;
    me.state = Worker::idle;
    me.spin_left = cfg_.spin_polls;
    clock_.at(clock_.now_ns(), EventKind::worker_poll, w, ++me.poll_gen);
}

SimStats Engine::run() {
    Event e;
    while (clock_.next(&e)) {
        st_.events++;
        switch (e.kind) {
            case EventKind::task_done:
                finish(e.who);
                break;
            case EventKind::worker_poll: {
                Worker& k = workers_[e.who];
                if (k.state == Worker::idle && e.tag == k.poll_gen) {
                    poll(e.who);
                }
                break;
            }
            case EventKind::client_issue:
                issue(e.who);
                break;
            case EventKind::monitor_tick:
                placement_.tick(clock_.now());
                if (clock_.now_ns() < end_ns_) {
                    clock_.at(
                            clock_.now_ns() + cfg_.tick_s * 1e9,
                            EventKind::monitor_tick,
                            0);
                }
                break;
        }
    }
    st_.variant = variant_name(cfg_.variant);
    st_.ccds = nccd_;
    st_.workers = topo_.num_workers();
    st_.qps = double(st_.queries) / cfg_.measure_s;
    std::sort(latencies_.begin(), latencies_.end());
    if (!latencies_.empty()) {
        auto pct = [&](double p) {
            size_t i = size_t(std::ceil(p * latencies_.size())) - 1;
            return latencies_[std::min(i, latencies_.size() - 1)] / 1e3;
        };
        st_.p50_us = pct(0.5);
        st_.p999_us = pct(0.999);
        double sum = 0;
        for (double l : latencies_) {
            sum += l;
        }
        st_.mean_us = sum / latencies_.size() / 1e3;
    }
    const uint64_t steals = st_.intra_steals + st_.cross_steals;
    st_.cross_ratio = shared_queue() ? std::numeric_limits<double>::quiet_NaN()
            : steals                 ? double(st_.cross_steals) / double(steals)
                                     : 0.0;
    st_.busy_fraction = busy_ns_ / (cfg_.measure_s * 1e9 * topo_.num_workers());
    st_.remaps = placement_.remaps();
    st_.replicated_ids = placement_.replicated_ids();
    st_.sim_end_s = clock_.now();
    return st_;
}

} // namespace

SimStats run_simulation(const SimConfig& config, const Workload& workload) {
    Engine engine(config, workload);
    return engine.run();
}

} // namespace sim
