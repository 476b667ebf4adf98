// pool_ran.cpp: linked into FAISS's C++ suite (faiss_upstream_tests). In
// the forced runs (FAISS_CCD_PARALLEL_MODE=ccd) it fails the suite unless
// the default pool ran tasks: proof that the IVF tests went through it.

#include <faiss/ccd_scheduler/Runtime.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

class PoolRan : public ::testing::Environment {
   public:
    void TearDown() override {
        const char* mode = std::getenv("FAISS_CCD_PARALLEL_MODE");
        const uint64_t tasks =
                faiss::ccd::Runtime::get_default()->pool().stats().tasks_run();
        std::printf(
                "pool_ran: the default pool ran %llu tasks\n",
                (unsigned long long)tasks);
        if (mode != nullptr && std::strcmp(mode, "ccd") == 0) {
            EXPECT_GT(tasks, 0u) << "PARALLEL_MODE_CCD was forced, yet no "
                                    "search went through the pool";
        }
    }
};

const auto* const registered = ::testing::AddGlobalTestEnvironment(new PoolRan);

} // namespace
