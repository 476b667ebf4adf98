/**
 * Monitor: per-MappingId traffic over a fast and a slow window, and
 * re-mapping of ids to CCDs when the traffic drifts.
 *
 * Recording (record(), the TrafficSink side) runs on the search path, once
 * per task: it appends to the calling worker's own buffer, under that
 * worker's own mutex, which only tick() ever contends for, once per
 * period. No cache line is shared between workers per task. Threads that
 * are not workers of the pool share one extra buffer.
 *
 * tick() (a background thread started by start(), or a test driving a
 * ManualClock) drains the buffers into both windows, measures the current
 * mapping's imbalance under the fast window (max per-CCD traffic over the
 * mean) and, when it passes `imbalance_threshold`, builds the next
 * mapping (map_hot_cold or map_migration_aware, HotColdMapping.h) and
 * publishes it with Pool::set_mapping as an immutable MappingSnapshot
 * with a new epoch. Ids that have left the fast window keep the CCD the
 * previous snapshot gave them while the slow window still holds their
 * traffic (stickiness); ids quieter than that, and ids never seen, hash.
 * The snapshot is thereby bounded by the slow window's ids; history()
 * keeps the last kHistoryLimit re-maps.
 *
 * A re-map is skipped when the imbalance is within 5% of what one id's
 * traffic forces (the hottest id alone over a CCD's mean share: no
 * mapping can fix that), and when the new mapping would not beat the
 * current one by more than 1%: moving things would only cool caches.
 *
 * fork(): in a child of the process that made it, a Monitor records
 * nothing. Its thread is the parent's and is not there to drain the
 * buffers (they would grow for as long as the child searches), and a
 * buffer's lock may be held by a parent's search that the child does not
 * have. The child's pool keeps the mapping it had at the fork; a Runtime
 * made in the child monitors the child's traffic.
 *
 * Thread contract: record() from any thread; tick(), stats(), history()
 * from any thread (serialised internally); start()/stop() from one thread.
 */

#pragma once

#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/TrafficSink.h>
#include <faiss/ccd_scheduler/TrafficWindow.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace faiss {
namespace ccd {

/// MonitorConfig: the windows and thresholds of re-mapping. The fast
/// window's default (2 s, in 0.5 s buckets) was chosen with the scale
/// model (docs/SIMULATION.md, "V2's monitor fast window", has the
/// figures): a hot set that rotates every 5 s is followed by a window of
/// at most half that period, where the paper's 10 s window lags a whole
/// rotation behind.
struct MonitorConfig {
    double fast_window_s = 2;         ///< window the re-map decision reads
    double slow_window_s = 60;        ///< longer view, for observability
    double bucket_s = 0.5;            ///< window resolution
    double imbalance_threshold = 1.2; ///< re-map when max/mean passes it
    double min_remap_interval_s = 1;  ///< at most one re-map per interval
    bool migration_aware = true;      ///< prefer mappings that move less
    double migration_slack = 0.05;    ///< see map_migration_aware
};

/// RemapRecord: what one re-map did.
struct RemapRecord {
    double time = 0;             ///< clock time of the re-map
    uint64_t epoch = 0;          ///< the pool's mapping epoch after it
    double imbalance_before = 0; ///< under the old map, fast window
    double imbalance_after = 0;  ///< under the new map, same traffic
    size_t ids_placed = 0;       ///< ids in the new snapshot
    size_t ids_moved = 0;        ///< ids whose CCD changed
    uint64_t traffic_moved = 0;  ///< fast-window bytes of the moved ids
    double build_ms = 0;         ///< time to compute the mapping
};

struct MonitorStats {
    uint64_t epoch = 0;                ///< pool's mapping epoch
    std::vector<uint64_t> ccd_traffic; ///< fast window, current map
    double imbalance = 1;              ///< max/mean of ccd_traffic
    uint64_t fast_bytes = 0;           ///< total in the fast window
    uint64_t slow_bytes = 0;           ///< total in the slow window
    uint64_t records = 0;              ///< record() calls drained so far
    size_t remaps = 0;                 ///< re-maps published
    double last_remap_time = -1;       ///< -1: never
    RemapRecord last_remap;            ///< valid when remaps > 0
};

/// RemapPlan: the mapping a re-map would publish: `ids` placed on `ccds`
/// (parallel arrays), and its record (epoch and build_ms left to the
/// caller, who publishes it).
struct RemapPlan {
    std::vector<MappingId> ids;
    std::vector<int> ccds;
    RemapRecord record;
};

/// plan_remap: the monitor's re-map decision, as a pure function of its
/// inputs, so that a simulator can drive it with a simulated clock. `fast`
/// and `slow` are the two windows at time `now`; `current` the mapping in
/// force; `previous` the last snapshot this monitor published (nullptr:
/// none); `last_remap_time` when that was (-infinity: never). Returns true
/// and fills `plan` when a re-map is due (the rules in the header comment
/// above: interval, threshold, the hottest id's bound, the 1% gain, the
/// slow window's stickiness).
bool plan_remap(
        const MonitorConfig& config,
        const TrafficWindow& fast,
        const TrafficWindow& slow,
        const Mapping& current,
        const MappingSnapshot* previous,
        int num_ccds,
        double now,
        double last_remap_time,
        RemapPlan* plan);

class Monitor final : public TrafficSink {
   public:
    /// Monitor: watches `pool` (which must outlive it); clock defaults to
    /// SteadyClock.
    Monitor(Pool& pool,
            MonitorConfig config = MonitorConfig(),
            std::shared_ptr<const Clock> clock = nullptr);
    ~Monitor() override;

    Monitor(const Monitor&) = delete;
    Monitor& operator=(const Monitor&) = delete;

    void record(MappingId id, uint64_t items, uint64_t bytes) noexcept override;

    /// tick: drain, advance the windows, re-map if needed. True if it
    /// published a new mapping.
    bool tick();

    /// start: tick every `period_s` seconds on a background thread.
    void start(double period_s = 0.5);
    /// stop: end the background thread (also done by the destructor).
    void stop();

    MonitorStats stats() const;
    std::vector<RemapRecord> history() const;
    const MonitorConfig& config() const {
        return config_;
    }

   private:
    struct Record {
        MappingId id;
        uint64_t bytes;
    };
    struct alignas(64) Buffer {
        std::mutex mutex;
        std::vector<Record> records; ///< guarded by mutex
    };

    std::vector<uint64_t> loads_under(
            const Mapping& mapping,
            const TrafficWindow::Totals& totals) const;

    Pool& pool_;
    MonitorConfig config_;
    std::shared_ptr<const Clock> clock_;
    /// Buffers for threads that are not workers, picked by thread.
    static constexpr int kOutsideBuffers = 16;
    /// A drained buffer keeps at most this many records' room (1 MB).
    static constexpr size_t kKeepRecords = 65536;
    std::vector<std::unique_ptr<Buffer>> buffers_; ///< per worker, + outsiders

    mutable std::mutex mutex_; ///< guards everything below
    TrafficWindow fast_;
    TrafficWindow slow_;
    std::vector<Record> drained_;
    std::unordered_map<MappingId, uint64_t> batch_; ///< one tick's sums
    uint64_t records_ = 0;
    /// history_: the last re-maps, at most kHistoryLimit of them.
    static constexpr size_t kHistoryLimit = 4096;
    std::vector<RemapRecord> history_;
    uint64_t remaps_ = 0; ///< every re-map ever made
    std::shared_ptr<const MappingSnapshot> snapshot_; ///< last published

    /// ThreadSync: how stop() wakes the thread. On the heap: a fork()
    /// child must leave it alone (the parent's thread waits in it there
    /// forever, and destroying a condition variable waits for waiters).
    struct ThreadSync {
        std::mutex mutex;
        std::condition_variable cv;
        bool stop = false; ///< guarded by mutex
    };
    std::unique_ptr<ThreadSync> sync_{new ThreadSync()};
    std::thread thread_;
    uint64_t thread_generation_ = 0;  ///< detail::fork_generation() at start
    uint64_t made_in_generation_ = 0; ///< ... when constructed
};

} // namespace ccd
} // namespace faiss
