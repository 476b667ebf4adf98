// Pool::CallerScope: counts the pool's callers (a nested scope once), and
// with fifo_callers lets at most num_workers + 1 outside threads in, never
// gating a worker or a nested scope.

#include <faiss/ccd_scheduler/Pool.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace faiss {
namespace ccd {
namespace {

/// ScopeHolder: another thread inside a CallerScope of `pool` from
/// construction (which waits until it is in) to destruction.
class ScopeHolder {
   public:
    explicit ScopeHolder(const Pool& pool)
            : thread_([this, &pool] {
                  Pool::CallerScope scope(pool);
                  in_.store(true);
                  while (!out_.load()) {
                      std::this_thread::yield();
                  }
              }) {
        while (!in_.load()) {
            std::this_thread::yield();
        }
    }
    ~ScopeHolder() {
        out_.store(true);
        thread_.join();
    }

   private:
    std::atomic<bool> in_{false};
    std::atomic<bool> out_{false};
    std::thread thread_;
};

TEST(CallerScope, CountsOthersAndNestedScopesOnce) {
    Pool pool(Topology::from_spec("1x2"), PolicyKind::ccd);
    {
        ScopeHolder other(pool);
        Pool::CallerScope mine(pool);
        EXPECT_EQ(mine.others(), 1);
        Pool::CallerScope nested(pool); // the same thread: not counted again
        EXPECT_EQ(nested.others(), 1);
    }
    Pool::CallerScope alone(pool);
    EXPECT_EQ(alone.others(), 0);
}

// With fifo_callers: outside threads beyond num_workers + 1 wait; a nested
// scope and a worker's scope never wait.
TEST(CallerScope, GatesOutsidersOnlyAndNests) {
    PoolOptions options;
    options.fifo_callers = true;
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd, options);
    std::atomic<bool> third_in{false};
    std::thread third;
    {
        Pool::CallerScope outer(pool);
        Pool::CallerScope nested(pool); // would deadlock if gated
        EXPECT_EQ(nested.others(), 0);  // its own thread, counted once
        std::atomic<bool> worker_in{false};
        pool.submit(kLocalMappingId, [&] {
            Pool::CallerScope in_worker(pool);
            worker_in.store(true);
        });
        pool.wait_idle();
        EXPECT_TRUE(worker_in.load());
        // Two slots (one worker + 1): a second outsider enters...
        ScopeHolder second(pool);
        // ...a third waits for one of us.
        third = std::thread([&] {
            Pool::CallerScope s(pool);
            third_in.store(true);
        });
        for (int i = 0; i < 1000; i++) {
            std::this_thread::yield();
        }
        EXPECT_FALSE(third_in.load());
    }
    third.join();
    EXPECT_TRUE(third_in.load());
}

// Without fifo_callers (the default), the same two slots taken by two
// outside threads do not hold a third back.
TEST(CallerScope, NoGateByDefault) {
    Pool pool(Topology::from_spec("1x1"), PolicyKind::ccd);
    Pool::CallerScope outer(pool);
    ScopeHolder second(pool);
    std::atomic<bool> in{false};
    std::thread t([&] {
        Pool::CallerScope s(pool);
        in.store(true);
    });
    t.join();
    EXPECT_TRUE(in.load());
}

} // namespace
} // namespace ccd
} // namespace faiss
