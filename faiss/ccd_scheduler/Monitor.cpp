#include <faiss/ccd_scheduler/Monitor.h>

#include <faiss/ccd_scheduler/HotColdMapping.h>
#include <faiss/ccd_scheduler/detail/ForkGeneration.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <stdexcept>
#include <thread>

namespace faiss {
namespace ccd {

namespace {
/// tl_outside_slot: a thread's outside buffer, from a hash of its id.
thread_local const uint32_t tl_outside_slot = uint32_t(
        hash_mapping_id(
                std::hash<std::thread::id>()(std::this_thread::get_id())) >>
        32);
} // namespace

Monitor::Monitor(
        Pool& pool,
        MonitorConfig config,
        std::shared_ptr<const Clock> clock)
        : pool_(pool),
          config_(config),
          clock_(clock ? std::move(clock) : std::make_shared<SteadyClock>()),
          fast_(config.fast_window_s, config.bucket_s),
          slow_(config.slow_window_s, config.bucket_s) {
    if (!(config.imbalance_threshold >= 1.0)) {
        throw std::invalid_argument(
                "MonitorConfig: imbalance_threshold must be >= 1");
    }
    buffers_.reserve(pool.num_workers() + kOutsideBuffers);
    for (int i = 0; i < pool.num_workers() + kOutsideBuffers; i++) {
        buffers_.emplace_back(new Buffer());
    }
    detail::watch_forks();
    made_in_generation_ = detail::fork_generation();
}

Monitor::~Monitor() {
    stop();
}

void Monitor::record(MappingId id, uint64_t, uint64_t bytes) noexcept {
    if (made_in_generation_ != detail::fork_generation()) {
        return; // a fork() child: nothing drains the buffers (Monitor.h)
    }
    const int w = pool_.current_worker();
    // Outside threads (callers that search themselves) spread over their
    // own buffers by a per-thread hash, so they do not queue on one lock.
    Buffer& buffer =
            *buffers_
                    [w >= 0 ? w
                            : pool_.num_workers() +
                                     int(tl_outside_slot % kOutsideBuffers)];
    try {
        std::lock_guard<std::mutex> lock(buffer.mutex);
        buffer.records.push_back({id, bytes});
    } catch (...) {
        // Out of memory while growing a buffer: the record is dropped.
        // Traffic is an estimate; the search must not fail for it.
    }
}

std::vector<uint64_t> Monitor::loads_under(
        const Mapping& mapping,
        const TrafficWindow::Totals& totals) const {
    const int nccd = pool_.topology().num_ccds();
    std::vector<uint64_t> loads(nccd, 0);
    for (const auto& [id, bytes] : totals) {
        loads[mapping.pick_ccd(id, nccd)] += bytes;
    }
    return loads;
}

bool plan_remap(
        const MonitorConfig& config,
        const TrafficWindow& fast,
        const TrafficWindow& slow,
        const Mapping& current,
        const MappingSnapshot* previous,
        int num_ccds,
        double now,
        double last_remap_time,
        RemapPlan* plan) {
    const int nccd = num_ccds;
    if (nccd < 2 || fast.total_bytes() == 0) {
        return false;
    }
    if (now - last_remap_time < config.min_remap_interval_s) {
        return false;
    }
    std::vector<uint64_t> loads(nccd, 0);
    for (const auto& [id, bytes] : fast.totals()) {
        loads[current.pick_ccd(id, nccd)] += bytes;
    }
    const double before = imbalance(loads);
    // No mapping beats one id's own traffic: when the hottest id alone
    // is over the threshold, only re-map if we are 5% above that bound,
    // or every tick would move traffic for nothing.
    uint64_t hottest = 0;
    for (const auto& entry : fast.totals()) {
        hottest = std::max(hottest, entry.second);
    }
    const double bound =
            std::max(1.0, double(hottest) * nccd / double(fast.total_bytes()));
    if (before <= std::max(config.imbalance_threshold, 1.05 * bound)) {
        return false;
    }

    const size_t n = fast.totals().size();
    std::vector<MappingId> ids;
    std::vector<uint64_t> traffic;
    std::vector<int> old_ccd;
    ids.reserve(n);
    traffic.reserve(n);
    old_ccd.reserve(n);
    for (const auto& [id, bytes] : fast.totals()) {
        ids.push_back(id);
        traffic.push_back(bytes);
        old_ccd.push_back(current.pick_ccd(id, nccd));
    }
    const std::vector<int> new_ccd = config.migration_aware
            ? map_migration_aware(
                      traffic,
                      old_ccd,
                      nccd,
                      config.migration_slack)
            : map_hot_cold(traffic, nccd);
    const double after = imbalance(ccd_loads(traffic, new_ccd, nccd));
    if (after > before * 0.99) {
        return false; // nothing a re-map can fix
    }
    RemapRecord rec;
    rec.time = now;
    rec.imbalance_before = before;
    rec.imbalance_after = after;
    for (size_t i = 0; i < n; i++) {
        if (new_ccd[i] != old_ccd[i]) {
            rec.ids_moved++;
            rec.traffic_moved += traffic[i];
        }
    }
    // Stickiness: ids of the previous snapshot that went quiet stay put
    // while the slow window still holds their traffic; quieter ones go
    // back to the hash. So the snapshot holds at most the slow window's
    // ids: it does not grow with every id ever placed.
    std::vector<int> ccds = new_ccd;
    if (previous != nullptr) {
        for (MappingId id : previous->ids()) {
            if (!fast.totals().count(id) && slow.totals().count(id)) {
                ids.push_back(id);
                ccds.push_back(previous->find(id));
            }
        }
    }
    rec.ids_placed = ids.size();
    plan->ids = std::move(ids);
    plan->ccds = std::move(ccds);
    plan->record = rec;
    return true;
}

bool Monitor::tick() {
    std::lock_guard<std::mutex> lock(mutex_);
    const double now = clock_->now();
    // Sum the drained records per id first: the windows then take one
    // update per distinct id instead of one per task.
    batch_.clear();
    for (auto& buffer : buffers_) {
        {
            std::lock_guard<std::mutex> block(buffer->mutex);
            drained_.swap(buffer->records);
        }
        for (const Record& r : drained_) {
            batch_[r.id] += r.bytes;
        }
        records_ += drained_.size();
        // Keeps its capacity for the next swap, up to kKeepRecords: each
        // swap hands this vector to another buffer, so a burst's capacity
        // would otherwise travel from buffer to buffer until every one of
        // them (workers + kOutsideBuffers) held that much, and the process
        // grew with every large batch.
        if (drained_.capacity() > kKeepRecords) {
            std::vector<Record>().swap(drained_);
        } else {
            drained_.clear();
        }
    }
    for (const auto& [id, bytes] : batch_) {
        fast_.add(now, id, bytes);
        slow_.add(now, id, bytes);
    }
    fast_.advance(now);
    slow_.advance(now);

    if (pool_.policy() != PolicyKind::ccd) {
        return false;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::shared_ptr<const Mapping> current = pool_.mapping();
    RemapPlan plan;
    if (!plan_remap(
                config_,
                fast_,
                slow_,
                *current,
                snapshot_.get(),
                pool_.topology().num_ccds(),
                now,
                history_.empty() ? -std::numeric_limits<double>::infinity()
                                 : history_.back().time,
                &plan)) {
        return false;
    }
    RemapRecord rec = plan.record;
    const int nccd = pool_.topology().num_ccds();
    auto next = std::make_shared<MappingSnapshot>(
            std::move(plan.ids),
            std::move(plan.ccds),
            nccd);
    rec.build_ms = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - t0)
                           .count();
    rec.epoch = pool_.set_mapping(next);
    snapshot_ = std::move(next);
    if (history_.size() >= kHistoryLimit) {
        // Bounded: the oldest half goes (remaps_ keeps the count).
        history_.erase(
                history_.begin(),
                history_.begin() + ptrdiff_t(kHistoryLimit / 2));
    }
    history_.push_back(rec);
    remaps_++;
    return true;
}

void Monitor::start(double period_s) {
    if (thread_.joinable()) {
        throw std::logic_error("Monitor::start: already started");
    }
    if (!(period_s > 0 && period_s <= 3600)) {
        // Beyond 2^63 ns condition_variable::wait_for overflows and returns
        // at once: the thread would spin (fuzz_scheduler_config).
        throw std::invalid_argument(
                "Monitor::start: period must be in (0, 3600] seconds");
    }
    {
        std::lock_guard<std::mutex> lock(sync_->mutex);
        sync_->stop = false;
    }
    detail::watch_forks();
    thread_generation_ = detail::fork_generation();
    thread_ = std::thread([this, period_s] {
        ThreadSync& sync = *sync_;
        std::unique_lock<std::mutex> lock(sync.mutex);
        while (!sync.cv.wait_for(
                lock,
                std::chrono::duration<double>(period_s),
                [&sync] {
                    return sync.stop;
                })) {
            lock.unlock();
            tick();
            lock.lock();
        }
    });
}

void Monitor::stop() {
    if (thread_.joinable() && thread_generation_ != detail::fork_generation()) {
        // A fork() child: the thread is the parent's and is not here (and
        // its lock may be held by it forever). Keep the handle, unused.
        new std::thread(std::move(thread_));
        sync_.release();
        sync_.reset(new ThreadSync());
        return;
    }
    {
        std::lock_guard<std::mutex> lock(sync_->mutex);
        sync_->stop = true;
    }
    sync_->cv.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

MonitorStats Monitor::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    MonitorStats s;
    s.epoch = pool_.mapping_epoch();
    s.ccd_traffic = loads_under(*pool_.mapping(), fast_.totals());
    s.imbalance = imbalance(s.ccd_traffic);
    s.fast_bytes = fast_.total_bytes();
    s.slow_bytes = slow_.total_bytes();
    s.records = records_;
    s.remaps = remaps_;
    if (!history_.empty()) {
        s.last_remap = history_.back();
        s.last_remap_time = history_.back().time;
    }
    return s;
}

std::vector<RemapRecord> Monitor::history() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return history_;
}

} // namespace ccd
} // namespace faiss
