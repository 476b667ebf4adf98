/**
 * SimClock: simulated time and the event queue of bench_sim's
 * discrete-event engine.
 *
 * Time is in nanoseconds (double). Events at equal times run in the order
 * they were scheduled (a sequence number breaks ties), so a run is a pure
 * function of its inputs and seed. The clock is also a faiss::ccd::Clock
 * (seconds), the one clock abstraction of the project, for anything that
 * reads time through it.
 */

#pragma once

#include <faiss/ccd_scheduler/Clock.h>

#include <cstdint>
#include <queue>
#include <vector>

namespace sim {

/// EventKind: what happens when an event fires.
enum class EventKind : uint8_t {
    task_done,    ///< worker `who` finished its task
    worker_poll,  ///< worker `who` looks for work (spinning or woken)
    client_issue, ///< client `who` issues its next query
    monitor_tick, ///< the traffic monitor drains and maybe re-maps
};

struct Event {
    double t_ns;
    uint64_t seq;
    EventKind kind;
    int who;
    uint64_t tag; ///< kind-specific (a worker's poll generation)
};

class SimClock final : public faiss::ccd::Clock {
   public:
    /// now: seconds (faiss::ccd::Clock).
    double now() const override {
        return now_ns_ * 1e-9;
    }
    double now_ns() const {
        return now_ns_;
    }

    /// at: schedule an event at absolute time t_ns (>= now).
    void at(double t_ns, EventKind kind, int who, uint64_t tag = 0) {
        queue_.push(
                Event{t_ns < now_ns_ ? now_ns_ : t_ns, seq_++, kind, who, tag});
    }

    /// next: pop the earliest event and move time to it; false when empty.
    bool next(Event* e) {
        if (queue_.empty()) {
            return false;
        }
        *e = queue_.top();
        queue_.pop();
        now_ns_ = e->t_ns;
        return true;
    }

    size_t pending() const {
        return queue_.size();
    }
    uint64_t scheduled() const {
        return seq_;
    }

   private:
    struct Later {
        bool operator()(const Event& a, const Event& b) const {
            return a.t_ns != b.t_ns ? a.t_ns > b.t_ns : a.seq > b.seq;
        }
    };
    std::priority_queue<Event, std::vector<Event>, Later> queue_;
    double now_ns_ = 0;
    uint64_t seq_ = 0;
};

} // namespace sim
