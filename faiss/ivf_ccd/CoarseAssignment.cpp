#include <faiss/ivf_ccd/CoarseAssignment.h>

#include <faiss/BatchShape.h>
#include <faiss/IVFScanCost.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexScalarQuantizer.h>
#include <faiss/ccd_scheduler/Clock.h>
#include <faiss/ccd_scheduler/WorkShare.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/distances.h>
#include <faiss/utils/utils.h>

#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace faiss {
namespace ccd {
namespace ivf {

namespace {

/// OmpOneThread: holds FAISS's OpenMP regions to one thread in the calling
/// thread for a scope (omp_set_num_threads is per thread), so a quantizer
/// call never starts a team on top of the pool's workers.
struct OmpOneThread {
    int saved;
    OmpOneThread() : saved(omp_get_max_threads()) {
        omp_set_num_threads(1);
    }
    ~OmpOneThread() {
        omp_set_num_threads(saved);
    }
};

/// hold_blas_to_one_thread: OpenBLAS (Debian's pthreads build) wakes its
/// own threads for every quantizer batch of distance_compute_blas_threshold
/// (20) queries or more, whatever OpenMP is set to, on top of the pool's
/// workers. OpenBLAS 0.3.21 has no per-thread setting: the first search in
/// the CCD mode sets the process's to one thread, for good (the pool is the
/// process's parallelism; FAISS's usual advice with OpenMP is the same),
/// unless FAISS_CCD_KEEP_BLAS_THREADS is set to a non-empty value other
/// than "0". Found by name, so another BLAS is left alone.
void hold_blas_to_one_thread() {
    static const bool done = [] {
        const char* keep = std::getenv("FAISS_CCD_KEEP_BLAS_THREADS");
        if (keep != nullptr && *keep != '\0' && std::strcmp(keep, "0") != 0) {
            return false;
        }
        using SetThreads = void (*)(int);
        auto set = reinterpret_cast<SetThreads>(
                dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
        if (set != nullptr) {
            set(1);
        }
        return set != nullptr;
    }();
    (void)done;
}

/// CoarseShare: a batch's quantizer call as a WorkShare of slices
/// (BatchShape.h's coarse_cut); every participant quantizes its slices
/// with FAISS's OpenMP held to one thread and adds the time they took to
/// `ns`.
struct CoarseShare final : RunnerFactory {
    const IndexIVF& ivf;
    idx_t n;
    const float* x;
    size_t nprobe;
    const SearchParameters* quantizer_params;
    float* dis;
    idx_t* keys;
    CoarseCut cut;
    mutable std::atomic<int64_t> ns{0};

    CoarseShare(
            const IndexIVF& ivf,
            idx_t n,
            const float* x,
            size_t nprobe,
            const SearchParameters* quantizer_params,
            float* dis,
            idx_t* keys,
            CoarseCut cut)
            : ivf(ivf),
              n(n),
              x(x),
              nprobe(nprobe),
              quantizer_params(quantizer_params),
              dis(dis),
              keys(keys),
              cut(cut) {}

    struct Runner final : UnitRunner {
        const CoarseShare& share;
        OmpOneThread one; ///< this participant's thread, while it runs
        explicit Runner(const CoarseShare& s) : share(s) {}
        void run(int64_t slice) override {
            const CoarseShare& s = share;
            const idx_t i0 = s.cut.rows == 0 ? 0 : slice * s.cut.rows;
            const idx_t i1 = s.cut.rows == 0 || slice + 1 == s.cut.slices
                    ? s.n
                    : i0 + s.cut.rows;
            const int64_t t0 = steady_now_ns();
            s.ivf.quantizer->search(
                    i1 - i0,
                    s.x + i0 * s.ivf.d,
                    s.nprobe,
                    s.dis + i0 * s.nprobe,
                    s.keys + i0 * s.nprobe,
                    s.quantizer_params);
            s.ns.fetch_add(steady_now_ns() - t0, std::memory_order_relaxed);
        }
    };

    std::unique_ptr<UnitRunner> make_runner() const override {
        return std::unique_ptr<UnitRunner>(new Runner(*this));
    }
};

} // namespace

bool may_cut_coarse(const IndexIVF& ivf) {
    if (dynamic_cast<const IndexIVFFlat*>(&ivf) != nullptr) {
        return true; // and IndexIVFFlatDedup: no coarse term
    }
    if (auto sq = dynamic_cast<const IndexIVFScalarQuantizer*>(&ivf)) {
        return !sq->by_residual || sq->metric_type == METRIC_L2;
    }
    if (auto pq = dynamic_cast<const IndexIVFPQ*>(&ivf)) {
        return !pq->by_residual; // and IndexIVFPQR
    }
    return false;
}

CoarseAssignment::CoarseAssignment(
        const ResolvedCall& call,
        idx_t n,
        const float* x) {
    const IndexIVF& ivf = call.ivf;
    const size_t nprobe = call.nprobe;
    Pool& pool = call.runtime->pool();
    keys.resize(n * nprobe);
    dis.resize(n * nprobe);
    hold_blas_to_one_thread();
    const CoarseCut cut = coarse_cut(
            long(n),
            n >= 2 * kCoarseAlign && may_cut_coarse(ivf)
                    ? coarse_ns_per_query(call.table_id)
                    : 0,
            pool.handoff_ns(),
            std::max(1, pool.num_workers() / (1 + call.scope.others())),
            long(distance_compute_blas_threshold));
    CoarseShare share(
            ivf,
            n,
            x,
            nprobe,
            call.params ? call.params->quantizer_params : nullptr,
            dis.data(),
            keys.data(),
            cut);
    slices = cut.helpers > 0 ? cut.slices : 0;
    const double t0 = getmillisecs();
    if (cut.helpers == 0) {
        // No cut (coarse_cut cuts only for helpers): the one call.
        CoarseShare::Runner(share).run(0);
    } else {
        std::vector<ShareGroup> groups(1);
        groups[0].end = cut.slices;
        groups[0].helpers = cut.helpers;
        run_shared(pool, groups, 0, share);
    }
    ms = getmillisecs() - t0;
    note_coarse_cost(
            call.table_id,
            double(share.ns.load(std::memory_order_relaxed)),
            double(n));
    ivf.invlists->prefetch_lists(keys.data(), keys.size());
}

} // namespace ivf
} // namespace ccd
} // namespace faiss
