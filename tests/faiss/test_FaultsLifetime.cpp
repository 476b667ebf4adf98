// The pool's lifetime under running searches: the default runtime
// replaced and destroyed while clients search, fork() while they search
// (the child searches too), and libgomp's interrupt lock held at the fork.
// Each client's answers are compared with stock FAISS's
// (reference_search: stock IndexIVF::search, one OpenMP thread).

#include <faiss/IndexIVFCCD.h>

#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>
#include <faiss/invlists/InvertedLists.h>

#include <gtest/gtest.h>

#include "ccd_scheduler/fork_test_util.h"
#include "ivf_test_util.h"
#include "searching_clients.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

using namespace ivf_test;
using fork_test::kUnderAsan;
using fork_test::kUnderTsan;
using fork_test::run_in_child;

namespace {

// ------------------------------------------------------ lifetime

// Clients search in PARALLEL_MODE_CCD on the default runtime while it is
// replaced 40 times (other topologies, or nullptr: a fresh one on next
// use). A search finishes on the runtime it started on, which lives until
// its last search lets go: every answer is stock's, nobody hangs, and
// every replaced runtime is destroyed once the clients stop.
TEST(Faults, DefaultRuntimeReplacedUnderSearches) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    const idx_t n = 6, k = 10;
    const Answer ref = stock(*ivf, n, k);
    ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
    SearchingClients clients(4, *ivf, ref, n, k);
    const char* specs[] = {"2x1", "1x2", "2x2", "4x1"};
    std::vector<std::weak_ptr<Runtime>> replaced;
    for (int i = 0; i < 40; i++) {
        const int before = clients.searches.load();
        while (clients.searches.load() < before + 2) {
            std::this_thread::yield();
        }
        std::shared_ptr<Runtime> next;
        if (i % 5 != 4) {
            next = make_runtime(specs[i % 4]);
        }
        replaced.push_back(Runtime::get_default());
        Runtime::set_default(next);
    }
    clients.stop();
    Runtime::set_default(nullptr);
    ivf->parallel_mode = 0;
    EXPECT_EQ(clients.wrong.load(), 0);
    int alive = 0;
    for (auto& w : replaced) {
        alive += !w.expired();
    }
    EXPECT_EQ(alive, 0) << "runtimes outlived every search";
}

// fork() while four threads search: each child searches the same index on
// the same runtime (its workers started again in the child, its monitor
// recording nothing there) and gets stock's answers; the parent's
// searches are undisturbed. Children used to hang, now and then, on a
// lock a parent's search held at the fork (HeldAcrossForks.h).
TEST(Faults, ForkWhileSearching) {
    if (kUnderTsan) {
        GTEST_SKIP() << "ThreadSanitizer does not support fork() with "
                        "threads running";
    }
    if (kUnderAsan) {
        GTEST_SKIP() << "GCC 12's ASan allocator is not fork-safe: a child "
                        "forked while a searching thread allocates hangs";
    }
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    const idx_t n = 6, k = 10;
    const Answer ref = stock(*ivf, n, k);
    auto runtime = Runtime::create(
            RuntimeOptions().set_topology("2x1").set_monitor(true, 0.01));
    faiss::ccd::IndexIVFCCD ccd(ivf.get(), runtime, 5);
    ccd.helpers = 1;
    SearchingClients clients(4, ccd, ref, n, k);
    for (int child = 0; child < 5; child++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const int status = run_in_child([&] {
            for (int q = 0; q < 3; q++) {
                std::vector<float> D(n * k);
                std::vector<idx_t> I(n * k);
                ccd.search(n, data().queries.data(), k, D.data(), I.data());
                if (D != ref.D || I != ref.I) {
                    return 1;
                }
            }
            runtime->pool().wait_idle();
            return 0;
        });
        EXPECT_EQ(status, 0)
                << "child " << child << (status < 0 ? " hung" : " failed");
    }
    clients.stop();
    EXPECT_EQ(clients.wrong.load(), 0);
}

// Issue 28, 2: FAISS's InterruptCallback::lock, which a search takes
// whenever an interrupt callback is installed (Python's faiss installs
// one), held by another thread at the fork. The child's first search
// waited for it forever. fork() cannot take it first: its holder runs the
// callback under it, and Python's waits for the GIL that the forking
// thread holds (that fork() hung). The child makes it anew
// (ForkSafety.cpp). The interleaving is forced: the holder keeps the lock
// from before fork() until the child has searched, as a holder waiting on
// the forking thread would.
TEST(Faults, InterruptLockHeldAtForkIsFreeInTheChild) {
    if (kUnderTsan) {
        GTEST_SKIP() << "ThreadSanitizer does not support fork() with "
                        "threads running";
    }
    struct NeverInterrupt : faiss::InterruptCallback {
        bool want_interrupt() override {
            return false;
        }
    };
    faiss::InterruptCallback::instance.reset(new NeverInterrupt());
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    const idx_t n = 6, k = 10;
    const Answer ref = stock(*ivf, n, k);
    ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
    std::atomic<bool> holding{false}, release{false}, gave_up{false};
    std::thread holder([&] {
        std::lock_guard<std::mutex> lock(faiss::InterruptCallback::lock);
        holding = true;
        // Until the child searched; a fork() that waited for this lock
        // would wait here for 30 s and the test then fails.
        for (int i = 0; i < 30000 && !release; i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        gave_up = !release;
    });
    while (!holding) {
        std::this_thread::yield();
    }
    const int status = run_in_child(
            [&] {
                std::vector<float> D(n * k);
                std::vector<idx_t> I(n * k);
                ivf->search(n, data().queries.data(), k, D.data(), I.data());
                return D == ref.D && I == ref.I ? 0 : 1;
            },
            30);
    release = true;
    holder.join();
    faiss::InterruptCallback::clear_instance();
    EXPECT_EQ(status, 0) << (status < 0 ? "the child hung" : "wrong answers");
    EXPECT_FALSE(gave_up) << "fork() waited for the lock's holder";
}

} // namespace
