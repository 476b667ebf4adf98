#include <faiss/ccd_scheduler/detail/TaskAllocator.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

// Under AddressSanitizer task nodes use plain new/delete, so that a use of
// a node after its task retired is still caught. (ThreadSanitizer runs the
// caches: their atomics are what it should check.)
#if defined(__SANITIZE_ADDRESS__)
#define FAISS_CCD_PLAIN_TASK_ALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAISS_CCD_PLAIN_TASK_ALLOC 1
#endif
#endif

namespace faiss {
namespace ccd {
namespace detail {

#ifdef FAISS_CCD_PLAIN_TASK_ALLOC

void* allocate_task(std::size_t size) {
    return ::operator new(size);
}
void deallocate_task(void* p, std::size_t) noexcept {
    ::operator delete(p);
}

#else

namespace {

// Size classes cover the task nodes the pool and the FAISS glue make
// (a vtable, id and group plus a lambda of a few captures: 48-160 bytes).
constexpr int kClasses = 3;
constexpr std::size_t kClassSize[kClasses] = {64, 128, 256};
constexpr int kMaxCached = 4096;   // per class, own list
constexpr int kMaxReturned = 4096; // per class, return stack (see Returns)

struct Cache;

/// Block: header in front of every cached allocation; 16 bytes keep the
/// payload aligned for any fundamental type.
struct alignas(16) Block {
    Cache* owner;
    Block* next;
};

int class_of(std::size_t size) {
    for (int c = 0; c < kClasses; c++) {
        if (size <= kClassSize[c]) {
            return c;
        }
    }
    return -1;
}

struct Cache {
    // Owner only.
    Block* free_list[kClasses] = {};
    int cached[kClasses] = {};
    // Pushed by any thread, taken whole by the owner; one line per class
    // so returns of different sizes do not collide. `count` bounds the
    // stack: a pusher counts its block before it pushes it, and frees it
    // to malloc instead when kMaxReturned are counted already; the owner
    // subtracts what it took. So count >= the stack's length (a counted
    // block may not be pushed yet) and the stack never holds more than
    // kMaxReturned: a client thread whose tasks workers free (the pool's
    // common pattern) no longer keeps every node of a big batch for ever.
    struct alignas(64) Returns {
        std::atomic<Block*> head{nullptr};
        std::atomic<int> count{0};
    };
    Returns returns[kClasses];
};

/// take_returns: the owner moves its return stack of class c into its
/// own list, up to kMaxCached blocks there, the rest back to malloc.
void take_returns(Cache* cache, int c) {
    // acquire: pairs with the pushers' release; their writes to the
    // blocks (the next links) are visible.
    Block* b =
            cache->returns[c].head.exchange(nullptr, std::memory_order_acquire);
    int taken = 0;
    while (b != nullptr) {
        Block* next = b->next;
        if (cache->cached[c] < kMaxCached) {
            b->next = cache->free_list[c];
            cache->free_list[c] = b;
            cache->cached[c]++;
        } else {
            std::free(b);
        }
        b = next;
        taken++;
    }
    // relaxed: a bound, not a publication; the blocks came with the
    // exchange above.
    cache->returns[c].count.fetch_sub(taken, std::memory_order_relaxed);
}

std::mutex orphans_mutex;

/// orphans: caches of exited threads, waiting for a new owner. Built on
/// first use and never destroyed, so it outlives every thread_local.
std::vector<Cache*>& orphans() {
    static std::vector<Cache*>* list = new std::vector<Cache*>();
    return *list;
}

/// ThreadCache: the calling thread's cache, adopted from an exited
/// thread's when one is free, handed back when this thread exits.
struct ThreadCache {
    Cache* cache = nullptr;
    Cache* get() {
        if (cache == nullptr) {
            std::lock_guard<std::mutex> lock(orphans_mutex);
            if (!orphans().empty()) {
                cache = orphans().back();
                orphans().pop_back();
            } else {
                cache = new Cache(); // lives forever (see the header)
            }
        }
        return cache;
    }
    ~ThreadCache() {
        if (cache != nullptr) {
            std::lock_guard<std::mutex> lock(orphans_mutex);
            orphans().push_back(cache);
            // A late free on this thread (another thread_local's
            // destructor) must now take the remote path: the cache may
            // already belong to someone else.
            cache = nullptr;
        }
    }
};

thread_local ThreadCache tl_cache;

} // namespace

void* allocate_task(std::size_t size) {
    const int c = class_of(size);
    if (c < 0) {
        return ::operator new(size);
    }
    Cache* cache = tl_cache.get();
    if (cache->free_list[c] == nullptr) {
        take_returns(cache, c);
    }
    Block* b = cache->free_list[c];
    if (b == nullptr) {
        void* raw = std::malloc(sizeof(Block) + kClassSize[c]);
        if (raw == nullptr) {
            throw std::bad_alloc();
        }
        b = static_cast<Block*>(raw);
    } else {
        cache->free_list[c] = b->next;
        cache->cached[c]--;
    }
    b->owner = cache;
    b->next = nullptr;
    return b + 1;
}

void deallocate_task(void* p, std::size_t size) noexcept {
    const int c = class_of(size);
    if (c < 0) {
        ::operator delete(p);
        return;
    }
    Block* b = static_cast<Block*>(p) - 1;
    Cache* owner = b->owner;
    if (owner == tl_cache.cache) {
        if (owner->cached[c] >= kMaxCached) {
            std::free(b);
            return;
        }
        b->next = owner->free_list[c];
        owner->free_list[c] = b;
        owner->cached[c]++;
        return;
    }
    // relaxed: only a bound (see Returns); the block is published by the
    // release CAS below.
    if (owner->returns[c].count.fetch_add(1, std::memory_order_relaxed) >=
        kMaxReturned) {
        owner->returns[c].count.fetch_sub(1, std::memory_order_relaxed);
        std::free(b);
        return;
    }
    std::atomic<Block*>& head = owner->returns[c].head;
    Block* old = head.load(std::memory_order_relaxed);
    do {
        b->next = old;
        // release: publishes b->next to the owner's exchange.
    } while (!head.compare_exchange_weak(
            old,
            b,
            std::memory_order_release,
            std::memory_order_relaxed));
}

#endif

} // namespace detail
} // namespace ccd
} // namespace faiss
