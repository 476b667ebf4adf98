// ParallelMode: which parallel_mode IVF indexes start in, which modes
// are valid, and the OpenMP team FAISS's own loops get in the CCD mode
// (declared in faiss/IVFSearchCCD.h).

#include <faiss/IVFSearchCCD.h>

#include <faiss/impl/FaissAssert.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace faiss {
namespace ccd {

namespace {

/// kUnset: default_mode_ before anything (the environment) set it.
constexpr int kUnset = -1;
std::atomic<int> default_mode_{kUnset};

int mode_from_env() {
    const char* env = std::getenv("FAISS_CCD_PARALLEL_MODE");
    if (env == nullptr || *env == '\0') {
        return 0;
    }
    if (std::strcmp(env, "ccd") == 0 || std::strcmp(env, "CCD") == 0) {
        return PARALLEL_MODE_CCD;
    }
    char* end = nullptr;
    const long mode = std::strtol(env, &end, 10);
    FAISS_THROW_IF_NOT_FMT(
            *end == '\0' && mode >= 0 && mode <= INT32_MAX,
            "FAISS_CCD_PARALLEL_MODE: expected \"ccd\" or a parallel_mode "
            "number, got \"%s\"",
            env);
    check_parallel_mode(int(mode));
    return int(mode);
}

} // namespace

int default_parallel_mode() {
    int mode = default_mode_.load(std::memory_order_acquire);
    if (mode == kUnset) {
        int expected = kUnset;
        // A bad variable throws here, in the first IVF constructor, every
        // time until it is fixed or set_default_parallel_mode is called.
        default_mode_.compare_exchange_strong(expected, mode_from_env());
        mode = default_mode_.load(std::memory_order_acquire);
    }
    return mode;
}

void set_default_parallel_mode(int mode) {
    check_parallel_mode(mode);
    default_mode_.store(mode, std::memory_order_release);
}

void check_parallel_mode(int mode) {
    // IndexIVF::PARALLEL_MODE_NO_HEAP_INIT, which FAISS 1.7.3 declares as
    // a (non-static) member.
    const int no_heap_init = 1024;
    const int base = mode & ~no_heap_init;
    FAISS_THROW_IF_NOT_FMT(
            (base >= 0 && base <= 3) || base == PARALLEL_MODE_CCD,
            "parallel_mode %d not supported: 0-3 or PARALLEL_MODE_CCD "
            "(%d), optionally | PARALLEL_MODE_NO_HEAP_INIT (%d)",
            mode,
            PARALLEL_MODE_CCD,
            no_heap_init);
}

FallbackTeam::FallbackTeam(bool ccd, Index::idx_t n) {
    const int threads = omp_get_max_threads();
    if (ccd && n < threads) {
        saved_ = threads;
        omp_set_num_threads(int(std::max<Index::idx_t>(1, n)));
    }
}

FallbackTeam::~FallbackTeam() {
    if (saved_ > 0) {
        omp_set_num_threads(saved_);
    }
}

} // namespace ccd
} // namespace faiss
