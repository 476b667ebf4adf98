/**
 * SwapSlot: a shared_ptr<const T> that many threads read without a lock or
 * an allocation, and that a writer replaces, releasing the old value once no
 * reader can still be using it. The pool keeps its Mapping in one (every
 * submit that places by id reads it; set_mapping replaces it).
 *
 * Readers announce themselves in one of kStripes counters, under the
 * parity of the version they saw, then load the pointer:
 *   R1  v = version_                      seq_cst load
 *   R2  count[stripe][v & 1] += 1          seq_cst RMW
 *   R3  version_ == v ? else undo R2 and go back to R1
 *   R4  p = ptr_                           seq_cst load; use *p
 *   R5  count[stripe][v & 1] -= 1          release RMW
 * A writer (writers are serialised by a mutex):
 *   W1  ptr_ = new                         seq_cst store
 *   W2  v' = version_++                    seq_cst RMW (old parity v' & 1)
 *   W3  wait until every count[.][v' & 1] is 0 (seq_cst loads)
 *   W4  release the old value.
 *
 * Why no reader uses a released value. A reader that passed R3 saw
 * version v at R3, after its R2. Let P be the pointer it loads at R4, and W
 * the writer that replaces P (W's W1 comes after that R4 in the seq_cst
 * order, else R4 would have seen W's pointer or a later one), so W's W2
 * comes after R3 too. The first writer whose W2 follows R3 moves the
 * version from v to v + 1: its W3 waits on parity v & 1, where the reader's
 * R2 (before R3, before that W2) is counted, until R5. Either that writer
 * is W, or W starts after it finished (the mutex), hence after R5.
 *
 * R3 is what makes this hold. Without it, a reader preempted between R1 and
 * R2 across one swap counts itself under the parity that swap has already
 * drained, then loads the new pointer; a second swap waits on the other
 * parity only and releases that pointer under the reader. test_SwapSlot
 * forces exactly that interleaving through the Hooks.
 *
 * Hooks: called at R1/R4 and in W3's loop; empty and inlined away in the
 * library, a test's own to force interleavings.
 *
 * Thread contract: read() from any thread, concurrently with anything;
 * replace(), get() and version() from any thread (replace() calls are
 * serialised). read()'s callable must not call replace() on the same slot
 * (that would wait for itself).
 */

#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace faiss {
namespace ccd {
namespace detail {

/// NoSwapHooks: the library's hooks, which do nothing.
struct NoSwapHooks {
    static void after_version_load() {}
    static void after_pointer_load() {}
    static void writer_waits() {}
};

template <class T, class Hooks = NoSwapHooks>
class SwapSlot {
   public:
    static constexpr int kStripes = 16;

    explicit SwapSlot(std::shared_ptr<const T> initial)
            : owner_(std::move(initial)) {
        ptr_.store(owner_.get(), std::memory_order_seq_cst);
    }

    SwapSlot(const SwapSlot&) = delete;
    SwapSlot& operator=(const SwapSlot&) = delete;

    /// read: f(const T&) on the current value; returns what f returns.
    /// `stripe_hint` spreads readers over the counters (any number; the
    /// same per thread keeps a thread on one cache line).
    template <class F>
    auto read(uint32_t stripe_hint, F&& f) const {
        Stripe& stripe = stripes_[stripe_hint % kStripes];
        uint64_t v;
        for (;;) {
            v = version_.load(std::memory_order_seq_cst); // R1
            Hooks::after_version_load();
            stripe.count[v & 1].fetch_add(1, std::memory_order_seq_cst); // R2
            if (version_.load(std::memory_order_seq_cst) == v) {         // R3
                break;
            }
            // A swap went by: our count may be under a parity already
            // drained. Undo and announce again under the new one.
            stripe.count[v & 1].fetch_sub(1, std::memory_order_relaxed);
        }
        const T* p = ptr_.load(std::memory_order_seq_cst); // R4
        Hooks::after_pointer_load();
        struct Exit {
            std::atomic<int64_t>& count;
            // release: our reads of *p happen before the writer's W3 sees
            // the count drop, and so before it releases *p.
            ~Exit() {
                count.fetch_sub(1, std::memory_order_release); // R5
            }
        } exit{stripe.count[v & 1]};
        return f(*p);
    }

    /// replace: publish `value`, wait until no reader uses the old one,
    /// and return the new version (1 after the first replace). The old
    /// value is released here unless someone else shares it.
    uint64_t replace(std::shared_ptr<const T> value) {
        std::shared_ptr<const T> old;
        uint64_t v;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            old = std::move(owner_);
            owner_ = std::move(value);
            ptr_.store(owner_.get(), std::memory_order_seq_cst);  // W1
            v = version_.fetch_add(1, std::memory_order_seq_cst); // W2
            for (int i = 0; i < kStripes; i++) {                  // W3
                const std::atomic<int64_t>& count = stripes_[i].count[v & 1];
                while (count.load(std::memory_order_seq_cst) != 0) {
                    Hooks::writer_waits();
                    std::this_thread::yield();
                }
            }
        }
        return v + 1; // W4: `old` goes here
    }

    /// get: the current value (a shared reference).
    std::shared_ptr<const T> get() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return owner_;
    }

    /// version: 0 at construction, +1 per replace().
    uint64_t version() const {
        return version_.load(std::memory_order_acquire);
    }

   private:
    // Its own line per stripe: readers on different stripes never share.
    struct alignas(64) Stripe {
        std::atomic<int64_t> count[2] = {{0}, {0}};
    };
    mutable Stripe stripes_[kStripes];
    alignas(64) std::atomic<uint64_t> version_{0};
    std::atomic<const T*> ptr_{nullptr};
    mutable std::mutex mutex_;       ///< serialises writers
    std::shared_ptr<const T> owner_; ///< guarded by mutex_
};

} // namespace detail
} // namespace ccd
} // namespace faiss
