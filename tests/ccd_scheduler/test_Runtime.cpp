// Runtime: options checked, the default runtime shared and replaceable,
// destruction after the pool drains (tasks still reporting traffic), and
// the last reference let go on one of the runtime's own workers.

#include <faiss/ccd_scheduler/Runtime.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <thread>

using namespace faiss::ccd;

namespace {

TEST(Runtime, OptionsAreChecked) {
    EXPECT_THROW(
            Runtime::create(RuntimeOptions().set_topology("nonsense")),
            std::invalid_argument);
    for (double period : {0.0, -1.0, 4000.0, std::nan("")}) {
        EXPECT_THROW(
                Runtime::create(
                        RuntimeOptions().set_topology("1x1").set_monitor(
                                true,
                                period)),
                std::invalid_argument)
                << period;
    }
    // Without a monitor the period means nothing.
    auto r = Runtime::create(
            RuntimeOptions().set_topology("2x1").set_monitor(false, -1));
    EXPECT_EQ(r->monitor(), nullptr);
    EXPECT_EQ(r->traffic_sink(), nullptr);
    EXPECT_EQ(r->pool().num_workers(), 2);
    auto m = Runtime::create(RuntimeOptions().set_topology("2x2"));
    ASSERT_NE(m->monitor(), nullptr);
    EXPECT_EQ(m->traffic_sink(), m->monitor());
    EXPECT_EQ(m->pool().topology().num_ccds(), 2);
}

TEST(Runtime, DefaultIsSharedAndReplaceable) {
    auto a = Runtime::get_default();
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(Runtime::get_default(), a);
    auto mine = Runtime::create(RuntimeOptions().set_topology("1x1"));
    Runtime::set_default(mine);
    EXPECT_EQ(Runtime::get_default(), mine);
    Runtime::set_default(nullptr);
    auto fresh = Runtime::get_default();
    ASSERT_NE(fresh, nullptr);
    EXPECT_NE(fresh, mine);
    Runtime::set_default(nullptr);
}

// Tasks queued when the last reference goes still run and still record
// into the monitor, which is stopped only after them (ASan and TSan watch
// this test for a monitor freed under a task).
TEST(Runtime, DestructionDrainsBeforeTheMonitorGoes) {
    std::atomic<int> ran{0};
    {
        auto r = Runtime::create(
                RuntimeOptions().set_topology("2x1").set_monitor(true, 0.01));
        TrafficSink* sink = r->traffic_sink();
        for (int i = 0; i < 2000; i++) {
            r->pool().submit(
                    make_mapping_id(1, uint32_t(i % 50)),
                    [&, sink, i] {
                        sink->record(
                                make_mapping_id(1, uint32_t(i % 50)),
                                1,
                                64);
                        ran.fetch_add(1);
                    });
        }
    }
    EXPECT_EQ(ran.load(), 2000);
}

// The last reference let go inside one of the runtime's own tasks (a
// search that held the default runtime while another thread replaced it):
// the runtime cannot stop its pool from there, so another thread destroys
// it, after the task, and nothing aborts.
TEST(Runtime, LastReferenceOnItsOwnWorker) {
    std::weak_ptr<Runtime> watch;
    std::atomic<bool> task_ended{false};
    {
        auto r = Runtime::create(RuntimeOptions().set_topology("2x1"));
        watch = r;
        r->pool().submit(kLocalMappingId, [held = r, &task_ended]() mutable {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            task_ended.store(true);
            // `held` goes with the task node, on this worker.
        });
    } // the test drops its reference while the task still holds one
    const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!watch.expired() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(task_ended.load());
    EXPECT_TRUE(watch.expired()) << "the runtime was never let go";
    // The destroying thread is detached: let it stop the pool before the
    // test process exits.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

} // namespace
