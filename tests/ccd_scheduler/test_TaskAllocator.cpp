// TaskAllocator: blocks allocated on one thread and freed on others come
// back intact and are reused; threads that exit hand their caches on.

#include <faiss/ccd_scheduler/detail/TaskAllocator.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "stress_scale.h"

using namespace faiss::ccd::detail;

namespace {

TEST(TaskAllocator, SizesAndAlignment) {
    for (size_t size : {1, 16, 48, 64, 65, 128, 200, 256, 257, 4096}) {
        void* p = allocate_task(size);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << size;
        std::memset(p, 0xab, size); // ASan/valgrind would flag an overflow
        deallocate_task(p, size);
    }
}

// Producers allocate and fill blocks, consumers check and free them: every
// block crosses threads, and producer threads come and go so caches are
// orphaned and adopted. Each block carries a pattern the consumer checks.
TEST(TaskAllocator, CrossThreadStress) {
    const int64_t per_producer = scaled(200000);
    const int kProducers = 3, kConsumers = 3, kGenerations = 4;
    // A block starts with its size; the rest is one repeated tag byte.
    std::vector<std::atomic<void*>> ring(1024);
    std::atomic<int64_t> produced{0}, consumed{0}, corrupt{0};
    std::atomic<bool> producers_done{false};
    auto fill = [](void* p, size_t size, uint8_t tag) {
        std::memcpy(p, &size, sizeof(size));
        std::memset(
                static_cast<uint8_t*>(p) + sizeof(size),
                tag,
                size - sizeof(size));
    };
    std::vector<std::thread> consumers;
    for (int c = 0; c < kConsumers; c++) {
        consumers.emplace_back([&, c] {
            for (size_t i = c;; i = (i + kConsumers) % ring.size()) {
                void* p = ring[i].exchange(nullptr, std::memory_order_acquire);
                if (p == nullptr) {
                    if (producers_done.load() &&
                        consumed.load() == produced.load()) {
                        return;
                    }
                    std::this_thread::yield();
                    continue;
                }
                size_t size;
                std::memcpy(&size, p, sizeof(size));
                const uint8_t* b =
                        static_cast<const uint8_t*>(p) + sizeof(size);
                for (size_t j = 1; j + sizeof(size) < size; j++) {
                    if (b[j] != b[0]) {
                        corrupt.fetch_add(1);
                        break;
                    }
                }
                deallocate_task(p, size);
                consumed.fetch_add(1);
            }
        });
    }
    for (int g = 0; g < kGenerations; g++) {
        std::vector<std::thread> producers;
        for (int t = 0; t < kProducers; t++) {
            producers.emplace_back([&, t] {
                for (int64_t i = 0; i < per_producer / kGenerations; i++) {
                    const size_t size = 24 + (i * 37 + t) % 240;
                    void* p = allocate_task(size);
                    fill(p, size, uint8_t(i + t));
                    // Publish in a free slot (release: the consumer sees
                    // the contents).
                    for (size_t j = (i * kProducers + t) % ring.size();;
                         j = (j + 1) % ring.size()) {
                        void* expected = nullptr;
                        if (ring[j].compare_exchange_strong(
                                    expected,
                                    p,
                                    std::memory_order_release)) {
                            break;
                        }
                    }
                    produced.fetch_add(1);
                }
            });
        }
        for (auto& th : producers) {
            th.join(); // their caches are orphaned here, adopted next round
        }
    }
    producers_done.store(true);
    for (auto& th : consumers) {
        th.join();
    }
    EXPECT_EQ(corrupt.load(), 0);
    EXPECT_EQ(consumed.load(), produced.load());
}

} // namespace
