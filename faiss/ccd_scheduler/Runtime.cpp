#include <faiss/ccd_scheduler/Runtime.h>

#include <faiss/ccd_scheduler/HeldAcrossForks.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace faiss {
namespace ccd {

Runtime::Runtime(const RuntimeOptions& options) {
    if (options.monitor &&
        !(options.monitor_period_s > 0 && options.monitor_period_s < 3600)) {
        throw std::invalid_argument(
                "Runtime: monitor period must be in (0, 3600) seconds");
    }
    pool_ = std::make_unique<Pool>(
            Topology::from_string(options.topology),
            options.policy,
            options.pool);
    if (options.monitor) {
        monitor_ = std::make_unique<Monitor>(*pool_, options.monitor_config);
        monitor_->start(options.monitor_period_s);
    }
}

Runtime::~Runtime() {
    if (pool_->current_worker() >= 0) {
        std::fprintf(
                stderr,
                "faiss_ccd: a Runtime is being destroyed on one of its own "
                "workers; that can never finish\n");
        std::abort();
    }
    // Tasks in flight may still record into the monitor: let them finish
    // before it goes, then stop it before the pool it watches goes.
    pool_->wait_idle();
    monitor_.reset();
    pool_.reset();
}

std::shared_ptr<Runtime> Runtime::create(const RuntimeOptions& options) {
    return std::shared_ptr<Runtime>(new Runtime(options), [](Runtime* r) {
        if (r->pool().current_worker() < 0) {
            delete r;
            return;
        }
        // The last reference went on one of the runtime's own workers,
        // which cannot wait for its own pool to stop: another thread does.
        std::thread([r] {
            delete r;
        }).detach();
    });
}

namespace {

// The default runtime. Never destroyed at exit: worker threads parked in
// the kernel need no joining when the process ends, and joining them from
// a static destructor would race with whatever else exit() tears down.
// fork() takes the default's mutex first: a child never finds it held by
// a parent's thread.
std::mutex& default_mutex() {
    static std::mutex* m = [] {
        auto* made = new std::mutex();
        hold_across_forks(*made);
        return made;
    }();
    return *m;
}

std::shared_ptr<Runtime>& default_slot() {
    static auto* slot = new std::shared_ptr<Runtime>();
    return *slot;
}

} // namespace

std::shared_ptr<Runtime> Runtime::get_default() {
    std::lock_guard<std::mutex> lock(default_mutex());
    std::shared_ptr<Runtime>& slot = default_slot();
    if (!slot) {
        slot = create();
    }
    return slot;
}

void Runtime::set_default(std::shared_ptr<Runtime> runtime) {
    std::shared_ptr<Runtime> old;
    {
        std::lock_guard<std::mutex> lock(default_mutex());
        old = std::move(default_slot());
        default_slot() = std::move(runtime);
    }
    // `old` is released here, outside the lock: its destructor waits for
    // its pool to drain.
}

} // namespace ccd
} // namespace faiss
