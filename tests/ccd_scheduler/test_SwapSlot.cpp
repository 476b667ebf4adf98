// SwapSlot: a released value is never read; the interleaving that broke the
// parity-only scheme is forced through the slot's hooks.

#include <faiss/ccd_scheduler/detail/SwapSlot.h>

#include "stress_scale.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace faiss {
namespace ccd {
namespace {

/// Registry: the values alive now, by address, and how many were ever
/// destroyed; a value's destructor takes itself out, so a reader can ask
/// whether what it holds was released without touching its memory.
struct Registry {
    std::mutex mutex;
    std::set<const void*> alive;
    uint64_t destroyed = 0;

    bool is_alive(const void* p) {
        std::lock_guard<std::mutex> lock(mutex);
        return alive.count(p) != 0;
    }
};

struct Tracked {
    Registry& registry;
    int value;
    Tracked(Registry& r, int v) : registry(r), value(v) {
        std::lock_guard<std::mutex> lock(registry.mutex);
        registry.alive.insert(this);
    }
    ~Tracked() {
        std::lock_guard<std::mutex> lock(registry.mutex);
        registry.alive.erase(this);
        registry.destroyed++;
    }
};

/// Gate: a one-shot event.
struct Gate {
    std::mutex mutex;
    std::condition_variable cv;
    bool open = false;
    void signal() {
        std::lock_guard<std::mutex> lock(mutex);
        open = true;
        cv.notify_all();
    }
    void wait() {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] {
            return open;
        });
    }
};

/// Script: the forced interleaving (see ReaderSurvivesTwoSwaps).
struct Script {
    Gate reader_saw_version;                    // reader between R1 and R2
    Gate first_swap_done;                       // ...may go on
    Gate reader_has_pointer;                    // reader between R4 and its use
    std::atomic<bool> second_swap_waits{false}; // in W3, for the reader
    std::atomic<bool> second_swap_returned{false};
    bool paused_once = false; // reader thread only
};
Script* g_script = nullptr;
thread_local bool tl_is_reader = false;

struct ForcingHooks {
    static void after_version_load() {
        if (!tl_is_reader || g_script->paused_once) {
            return;
        }
        g_script->paused_once = true;
        g_script->reader_saw_version.signal();
        g_script->first_swap_done.wait();
    }
    static void after_pointer_load() {
        if (!tl_is_reader) {
            return;
        }
        g_script->reader_has_pointer.signal();
        // Go on once the second swap either waits for us (correct) or
        // has already returned, having released what we hold (the bug).
        while (!g_script->second_swap_waits.load() &&
               !g_script->second_swap_returned.load()) {
            std::this_thread::yield();
        }
    }
    static void writer_waits() {
        g_script->second_swap_waits.store(true);
    }
};

using ForcedSlot = detail::SwapSlot<Tracked, ForcingHooks>;

// The interleaving of the review: a reader reads the version (v0), is held
// before announcing itself; swap 1 (A -> B) runs to completion; the reader
// announces under v0's parity and loads B; swap 2 (B -> C) runs. Swap 2
// must wait for the reader, so B is alive when the reader uses it.
TEST(SwapSlot, ReaderSurvivesTwoSwaps) {
    Registry registry;
    Script script;
    g_script = &script;
    ForcedSlot slot(std::make_shared<Tracked>(registry, 0));

    bool reader_saw_alive = false;
    int reader_saw_value = -1;
    std::thread reader([&] {
        tl_is_reader = true;
        slot.read(0, [&](const Tracked& t) {
            reader_saw_alive = registry.is_alive(&t);
            if (reader_saw_alive) {
                reader_saw_value = t.value;
            }
            return 0;
        });
    });

    script.reader_saw_version.wait();
    EXPECT_EQ(slot.replace(std::make_shared<Tracked>(registry, 1)), 1u);
    EXPECT_EQ(registry.destroyed, 1u); // A: nobody had it
    script.first_swap_done.signal();

    script.reader_has_pointer.wait();
    std::thread second([&] {
        slot.replace(std::make_shared<Tracked>(registry, 2));
        script.second_swap_returned.store(true);
    });
    reader.join();
    second.join();

    EXPECT_TRUE(reader_saw_alive) << "a swap released the value a reader "
                                     "was using";
    EXPECT_EQ(reader_saw_value, 1);
    EXPECT_EQ(registry.destroyed, 2u); // A and B, each once
    EXPECT_EQ(slot.version(), 2u);
    EXPECT_EQ(slot.get()->value, 2);
    g_script = nullptr;
}

// Readers and writers at full speed: every read sees a live value, every
// value is destroyed exactly once, every read is counted exactly once.
TEST(SwapSlot, StressReadersAndWriters) {
    Registry registry;
    const int readers = 4;
    const int reads = scaled(200000);
    const int swaps = scaled(2000);
    {
        detail::SwapSlot<Tracked> slot(std::make_shared<Tracked>(registry, 0));
        std::atomic<int64_t> dead_reads{0};
        std::atomic<int64_t> total_reads{0};
        std::atomic<int> last_seen_max{0};
        std::vector<std::thread> threads;
        for (int r = 0; r < readers; r++) {
            threads.emplace_back([&, r] {
                int64_t mine = 0;
                int prev = 0;
                for (int i = 0; i < reads; i++) {
                    const int v = slot.read(uint32_t(r), [&](const Tracked& t) {
                        if (!registry.is_alive(&t)) {
                            dead_reads.fetch_add(1);
                            return prev;
                        }
                        return t.value;
                    });
                    // Values only move forward for one reader.
                    EXPECT_GE(v, prev);
                    prev = v;
                    mine++;
                }
                total_reads.fetch_add(mine);
                int seen = last_seen_max.load();
                while (prev > seen &&
                       !last_seen_max.compare_exchange_weak(seen, prev)) {
                }
            });
        }
        threads.emplace_back([&] {
            for (int s = 1; s <= swaps; s++) {
                EXPECT_EQ(
                        slot.replace(std::make_shared<Tracked>(registry, s)),
                        uint64_t(s));
            }
        });
        for (std::thread& t : threads) {
            t.join();
        }
        EXPECT_EQ(dead_reads.load(), 0);
        EXPECT_EQ(total_reads.load(), int64_t(readers) * reads);
        EXPECT_LE(last_seen_max.load(), swaps);
        EXPECT_EQ(registry.destroyed, uint64_t(swaps)); // all but the last
    }
    EXPECT_EQ(registry.destroyed, uint64_t(swaps) + 1);
    EXPECT_TRUE(registry.alive.empty());
}

} // namespace
} // namespace ccd
} // namespace faiss
