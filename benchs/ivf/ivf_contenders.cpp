#include "ivf_contenders.h"

#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/invlists/InvertedLists.h>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bench {
namespace ivf {

namespace {

class StockContender final : public Contender {
   public:
    StockContender(faiss::IndexIVF* index, int mode, int omp_threads)
            : Contender(
                      "stock-pm" + std::to_string(mode) +
                      (omp_threads == 1 ? "-t1" : "")),
              index_(index),
              mode_(mode),
              omp_threads_(omp_threads) {}

    std::string describe() const override {
        return "FAISS IndexIVF::search, parallel_mode " +
                std::to_string(mode_) + ", " + std::to_string(omp_threads_) +
                " OpenMP threads per calling thread" +
                (mode_ == 0 ? " (batch cut in slices; one query = one thread)"
                            : " (probed lists of each query shared, "
                              "schedule(dynamic))");
    }
    void prepare() override {
        index_->parallel_mode = mode_;
    }
    void client_init() const override {
        omp_set_num_threads(omp_threads_);
    }
    void search(
            idx_t n,
            const float* x,
            idx_t k,
            float* distances,
            idx_t* labels) const override {
        index_->search(n, x, k, distances, labels);
    }

   private:
    faiss::IndexIVF* index_;
    int mode_;
    int omp_threads_;
};

class PoolContender final : public Contender {
   public:
    PoolContender(
            const std::string& name,
            faiss::IndexIVF* index,
            std::shared_ptr<faiss::ccd::Runtime> runtime,
            bool split,
            int spin_rounds)
            : Contender(name),
              runtime_(runtime),
              ccd_(index, runtime),
              spin_rounds_(spin_rounds) {
        if (!split) {
            ccd_.split_factor = 0;
        }
    }

    std::string describe() const override {
        char buf[160];
        if (ccd_.split_factor > 0) {
            snprintf(
                    buf,
                    sizeof(buf),
                    ", lists > %g x avg cut in chunks of %g x avg "
                    "(min %zu)",
                    ccd_.split_factor,
                    ccd_.chunk_factor,
                    ccd_.min_chunk);
        } else {
            snprintf(buf, sizeof(buf), ", no list splitting");
        }
        return std::string("IndexIVFCCD on a Pool, policy ") +
                faiss::ccd::policy_name(runtime_->pool().policy()) + ", " +
                std::to_string(runtime_->pool().num_workers()) + " workers" +
                (spin_rounds_ >= 0 ? ", " + std::to_string(spin_rounds_) +
                                 " idle spin rounds before parking"
                                   : std::string()) +
                buf +
                (ccd_.list_major_min_batch >= 0
                         ? ", list-major batches from " +
                                 std::to_string(ccd_.list_major_min_batch) +
                                 " queries"
                         : std::string(", list-major batches from 64 "
                                       "queries over lists of 16 KB"));
    }
    void search(
            idx_t n,
            const float* x,
            idx_t k,
            float* distances,
            idx_t* labels) const override {
        ccd_.search(n, x, k, distances, labels);
    }
    const faiss::ccd::Pool* pool() const override {
        return &runtime_->pool();
    }
    const faiss::ccd::IndexIVFCCD* ivf_ccd() const override {
        return &ccd_;
    }

   private:
    std::shared_ptr<faiss::ccd::Runtime> runtime_;
    faiss::ccd::IndexIVFCCD ccd_;
    int spin_rounds_;
};

/// CcdModeContender: the fork's IndexIVF::search in PARALLEL_MODE_CCD; on
/// the default runtime, or on its own one given per call.
class CcdModeContender final : public Contender {
   public:
    CcdModeContender(
            const std::string& name,
            faiss::IndexIVF* index,
            std::shared_ptr<faiss::ccd::Runtime> own,
            std::string how)
            : Contender(name),
              index_(index),
              runtime_(own ? own : faiss::ccd::Runtime::get_default()),
              own_(own != nullptr),
              how_(std::move(how)) {
        params_.runtime = runtime_.get();
        params_.nprobe = index->nprobe;
    }

    std::string describe() const override {
        return "the fork's IndexIVF::search, parallel_mode "
               "PARALLEL_MODE_CCD, " +
                std::string(own_ ? "a runtime of its own" : "default runtime") +
                " (" + std::to_string(runtime_->pool().num_workers()) +
                " workers, policy " +
                faiss::ccd::policy_name(runtime_->pool().policy()) +
                (how_.empty() ? "" : ", " + how_) + ")";
    }
    void prepare() override {
        index_->parallel_mode = faiss::PARALLEL_MODE_CCD;
        params_.nprobe = index_->nprobe;
    }
    void search(
            idx_t n,
            const float* x,
            idx_t k,
            float* distances,
            idx_t* labels) const override {
        index_->search(n, x, k, distances, labels, own_ ? &params_ : nullptr);
    }
    const faiss::ccd::Pool* pool() const override {
        return &runtime_->pool();
    }

   private:
    faiss::IndexIVF* index_;
    std::shared_ptr<faiss::ccd::Runtime> runtime_;
    bool own_;
    std::string how_;
    faiss::ccd::SearchParametersIVFCCD params_;
};

} // namespace

std::unique_ptr<Contender> make_ccd_mode(faiss::IndexIVF* index) {
    return std::make_unique<CcdModeContender>("ccd", index, nullptr, "");
}

std::unique_ptr<Contender> make_ccd_mode_on(
        const std::string& name,
        faiss::IndexIVF* index,
        std::shared_ptr<faiss::ccd::Runtime> runtime,
        const std::string& how) {
    return std::make_unique<CcdModeContender>(
            name,
            index,
            std::move(runtime),
            how);
}

std::unique_ptr<Contender>
make_stock(faiss::IndexIVF* index, int parallel_mode, int omp_threads) {
    return std::make_unique<StockContender>(index, parallel_mode, omp_threads);
}

std::unique_ptr<Contender> make_pool(
        const std::string& name,
        faiss::IndexIVF* index,
        std::shared_ptr<faiss::ccd::Runtime> runtime,
        bool split,
        int spin_rounds) {
    return std::make_unique<PoolContender>(
            name,
            index,
            std::move(runtime),
            split,
            spin_rounds);
}

SplitAnalysis analyse_split(
        const faiss::IndexIVF& index,
        const faiss::ccd::IndexIVFCCD& ccd,
        size_t nq,
        const float* queries,
        int workers) {
    SplitAnalysis a;
    a.queries = nq;
    a.workers = std::max(1, workers);
    const size_t nprobe = std::min(index.nprobe, index.nlist);
    std::vector<idx_t> assign(nq * nprobe);
    std::vector<float> dis(nq * nprobe);
    index.quantizer->search(
            idx_t(nq),
            queries,
            idx_t(nprobe),
            dis.data(),
            assign.data());

    // The rule of IndexIVFCCD.cpp's Chunking (private there).
    const double avg = std::max(
            1.0,
            double(index.invlists->compute_ntotal()) / index.nlist);
    size_t chunk = SIZE_MAX, threshold = SIZE_MAX;
    if (ccd.split_factor > 0) {
        chunk = std::max(ccd.min_chunk, size_t(ccd.chunk_factor * avg));
        threshold = std::max(chunk, size_t(ccd.split_factor * avg));
    }
    a.split_threshold = threshold == SIZE_MAX ? -1 : double(threshold);
    a.chunk = chunk == SIZE_MAX ? -1 : double(chunk);

    double lists = 0, tasks = 0, split_lists = 0, codes = 0;
    double share_ns = 0, share_s = 0, speed_ns = 0, speed_s = 0;
    size_t counted = 0;
    for (size_t q = 0; q < nq; q++) {
        size_t total = 0, big_ns = 0, big_s = 0;
        for (size_t p = 0; p < nprobe; p++) {
            const idx_t l = assign[q * nprobe + p];
            const size_t size = l < 0 ? 0 : index.invlists->list_size(l);
            if (size == 0) {
                continue;
            }
            lists++;
            total += size;
            big_ns = std::max(big_ns, size);
            if (size > threshold) {
                split_lists++;
                tasks += double((size + chunk - 1) / chunk);
                big_s = std::max(big_s, std::min(size, chunk));
            } else {
                tasks++;
                big_s = std::max(big_s, size);
            }
        }
        codes += double(total);
        if (total == 0) {
            continue;
        }
        counted++;
        const double t = double(total);
        share_ns += double(big_ns) / t;
        share_s += double(big_s) / t;
        speed_ns += t / std::max(t / a.workers, double(big_ns));
        speed_s += t / std::max(t / a.workers, double(big_s));
    }
    const double n = double(std::max<size_t>(1, nq));
    const double c = double(std::max<size_t>(1, counted));
    a.lists_per_query = lists / n;
    a.tasks_per_query = tasks / n;
    a.split_lists_per_query = split_lists / n;
    a.codes_per_query = codes / n;
    a.largest_task_share_nosplit = share_ns / c;
    a.largest_task_share_split = share_s / c;
    a.ideal_speedup_nosplit = speed_ns / c;
    a.ideal_speedup_split = speed_s / c;
    return a;
}

} // namespace ivf
} // namespace bench
