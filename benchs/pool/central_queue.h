/**
 * central_queue.h: the baseline of bench_pool, the textbook thread pool.
 *
 * MutexQueue: one std::deque of std::function behind one std::mutex; idle
 * workers sleep on one std::condition_variable; submit() locks, pushes,
 * unlocks and notifies one. Every submit and every pop takes the same lock,
 * which is the cost the work-stealing pool exists to avoid.
 *
 * Latch: a countdown with a mutex + condition variable for the sleeper, the
 * matching way to wait for a set of tasks of such a pool.
 */

#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace bench {

class MutexQueue {
   public:
    explicit MutexQueue(int workers) {
        threads_.reserve(workers);
        for (int i = 0; i < workers; i++) {
            threads_.emplace_back([this] {
                worker_main();
            });
        }
    }

    /// ~MutexQueue: runs what is queued, then stops and joins the workers.
    ~MutexQueue() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        ready_.notify_all();
        for (std::thread& t : threads_) {
            t.join();
        }
    }

    MutexQueue(const MutexQueue&) = delete;
    MutexQueue& operator=(const MutexQueue&) = delete;

    /// submit: any thread, tasks of the queue included.
    void submit(std::function<void()> task) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            tasks_.push_back(std::move(task));
        }
        ready_.notify_one();
    }

   private:
    void worker_main() {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                ready_.wait(lock, [this] {
                    return stop_ || !tasks_.empty();
                });
                if (tasks_.empty()) {
                    return; // stop_ and drained
                }
                task = std::move(tasks_.front());
                tasks_.pop_front();
            }
            task();
        }
    }

    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> tasks_; ///< guarded by mutex_
    bool stop_ = false;                       ///< guarded by mutex_
    std::vector<std::thread> threads_;
};

/// Latch: wait() returns once count_down() has taken the count to zero.
/// add() may raise the count again only while it is above zero (a task adds
/// its children before counting itself down).
class Latch {
   public:
    explicit Latch(int64_t count) : count_(count) {}

    void add(int64_t n) {
        // relaxed: the count is above zero here, so no waiter can be
        // released; the decrement that reaches zero is an RMW after it.
        count_.fetch_add(n, std::memory_order_relaxed);
    }

    void count_down() {
        // acq_rel: the last decrement sees every task's effects (acquire of
        // earlier releases) and publishes them through the mutex.
        if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
            // Under the lock: the waiter cannot return (and destroy us)
            // before we let go of the mutex.
            cv_.notify_all();
        }
    }

    void wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] {
            return done_;
        });
    }

   private:
    std::atomic<int64_t> count_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false; ///< guarded by mutex_
};

} // namespace bench
