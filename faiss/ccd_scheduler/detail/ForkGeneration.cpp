#include <faiss/ccd_scheduler/detail/ForkGeneration.h>

#include <pthread.h>

#include <atomic>

namespace faiss {
namespace ccd {
namespace detail {

namespace {

std::atomic<uint64_t> generation{0};

void in_child() {
    // The child has one thread: relaxed suffices; later threads of the
    // child are created after this store.
    generation.fetch_add(1, std::memory_order_relaxed);
}

bool register_handler() {
    pthread_atfork(nullptr, nullptr, in_child);
    return true;
}

} // namespace

uint64_t fork_generation() {
    static const bool registered = register_handler();
    (void)registered;
    return generation.load(std::memory_order_relaxed);
}

} // namespace detail
} // namespace ccd
} // namespace faiss
