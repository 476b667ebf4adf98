#include <faiss/ccd_scheduler/detail/ForkGeneration.h>

#include <pthread.h>

namespace faiss {
namespace ccd {
namespace detail {

std::atomic<uint64_t> fork_generation_counter{0};

namespace {

void in_child() {
    // The child has one thread: relaxed suffices; later threads of the
    // child are created after this store.
    fork_generation_counter.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

void watch_forks() {
    static const int registered = pthread_atfork(nullptr, nullptr, in_child);
    (void)registered;
}

} // namespace detail
} // namespace ccd
} // namespace faiss
