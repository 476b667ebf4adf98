// The fork's IndexIVF in PARALLEL_MODE_CCD: the same answers as parallel
// mode 0 of the same build, with the pool's task counter proving the pool
// ran them, through what wraps an IVF index (IndexIDMap2, IndexPreTransform
// with OPQ, IndexRefineFlat, IndexShards, clone_index, write/read with the
// default mode), for what the CCD scans now serve themselves (max_codes,
// IDSelectors, store_pairs under IndexIVFPQR, IndexIVFFlatDedup,
// PARALLEL_MODE_NO_HEAP_INIT), per-call SearchParametersIVFCCD, and the
// errors FAISS would have aborted on.

#include <faiss/IVFScanCost.h>
#include <faiss/IVFSearchCCD.h>
#include <faiss/IVFlib.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQR.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/IndexRefine.h>
#include <faiss/IndexShards.h>
#include <faiss/clone_index.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <faiss/utils/Heap.h>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <omp.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ivf_test_util.h"

using namespace ivf_test;

namespace {

/// ModeCCD: every test gets its own default runtime (2 CCDs of 1 worker,
/// no monitor), and leaves the defaults as it found them.
class ModeCCD : public ::testing::Test {
   protected:
    void SetUp() override {
        runtime_ = make_runtime("2x1");
        Runtime::set_default(runtime_);
    }
    void TearDown() override {
        set_default_parallel_mode(0);
        Runtime::set_default(nullptr);
    }
    /// tasks: CCD-mode scan phases so far (a search the cost model runs
    /// in the calling thread alone submits no pool task, but counts).
    uint64_t tasks() const {
        return faiss::ccd::ivf_ccd_stats.calls;
    }

    /// default_pool_tasks: the default pool's task count once it is idle
    /// (a search returns when its scans are done; the pool counts a helper
    /// a moment later).
    uint64_t default_pool_tasks() const {
        runtime_->pool().wait_idle();
        return runtime_->pool().stats().tasks_run();
    }

    /// same_in_both_modes: search `index` with every IVF inside at mode 0,
    /// then at PARALLEL_MODE_CCD; the answers agree and the pool ran.
    void same_in_both_modes(
            faiss::Index& index,
            const std::vector<faiss::IndexIVF*>& ivfs,
            const std::string& what,
            idx_t n = 40,
            idx_t k = 10,
            const faiss::SearchParameters* params = nullptr) {
        std::vector<float> d0(n * k), d1(n * k);
        std::vector<idx_t> i0(n * k), i1(n * k);
        for (auto* ivf : ivfs) {
            ivf->parallel_mode = 0;
        }
        reference_search(
                index,
                n,
                data().queries.data(),
                k,
                d0.data(),
                i0.data(),
                params);
        for (auto* ivf : ivfs) {
            ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
        }
        const uint64_t before = tasks();
        index.search(n, data().queries.data(), k, d1.data(), i1.data(), params);
        EXPECT_GT(tasks(), before) << what << ": the pool ran nothing";
        expect_same_results(n, k, d0, i0, d1, i1, what);
    }

    std::shared_ptr<Runtime> runtime_;
};

TEST_F(ModeCCD, FlatPQSQ8BothMetrics) {
    for (const char* key : {"IVF32,Flat", "IVF32,PQ4", "IVF32,SQ8"}) {
        for (auto metric : {faiss::METRIC_L2, faiss::METRIC_INNER_PRODUCT}) {
            auto ivf = make_index(key, metric);
            ivf->nprobe = 8;
            same_in_both_modes(*ivf, {ivf.get()}, key, 200, 20);
            same_in_both_modes(*ivf, {ivf.get()}, key, 3, 5);
        }
    }
}

TEST_F(ModeCCD, ThroughIDMap2AndClone) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 8;
    ivf->reset();
    faiss::IndexIDMap2 idmap(ivf.get());
    std::vector<idx_t> ids(5000);
    for (idx_t i = 0; i < 5000; i++) {
        ids[i] = 7 * i + 3;
    }
    idmap.add_with_ids(5000, data().base.data(), ids.data());
    same_in_both_modes(idmap, {ivf.get()}, "IndexIDMap2");

    std::unique_ptr<faiss::Index> copy(faiss::clone_index(&idmap));
    auto* inner = dynamic_cast<faiss::IndexIVF*>(
            dynamic_cast<faiss::IndexIDMap2*>(copy.get())->index);
    ASSERT_NE(inner, nullptr);
    EXPECT_EQ(inner->parallel_mode, faiss::PARALLEL_MODE_CCD);
    same_in_both_modes(*copy, {inner}, "clone_index");
}

TEST_F(ModeCCD, ThroughPreTransformAndRefine) {
    std::unique_ptr<faiss::Index> opq(
            faiss::index_factory(kDim, "OPQ4,IVF32,PQ4"));
    auto* ivf = faiss::ivflib::extract_index_ivf(opq.get());
    dynamic_cast<faiss::IndexIVFPQ*>(ivf)->do_polysemous_training = false;
    opq->train(4000, data().train.data());
    opq->add(5000, data().base.data());
    ivf->nprobe = 8;
    same_in_both_modes(*opq, {ivf}, "OPQ4,IVF32,PQ4");

    auto base = make_index("IVF32,PQ4", faiss::METRIC_L2);
    base->nprobe = 8;
    faiss::IndexRefineFlat refine(base.get(), data().base.data());
    refine.k_factor = 4;
    same_in_both_modes(refine, {base.get()}, "IndexRefineFlat");
}

TEST_F(ModeCCD, ThroughShards) {
    auto a = make_index("IVF32,Flat", faiss::METRIC_L2);
    auto b = make_index("IVF32,Flat", faiss::METRIC_L2);
    a->nprobe = b->nprobe = 8;
    a->reset();
    b->reset();
    a->add(2500, data().base.data());
    b->add(2500, data().base.data() + 2500 * kDim);
    faiss::IndexShards shards(kDim, /*threaded=*/true, /*successive_ids=*/true);
    shards.add_shard(a.get());
    shards.add_shard(b.get());
    same_in_both_modes(shards, {a.get(), b.get()}, "IndexShards");
}

// What IndexIVFCCD used to hand back to FAISS, now served by the pool.
TEST_F(ModeCCD, MaxCodesSelectorsAndNoHeapInit) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->nprobe = 16;
    faiss::SearchParametersIVF limited;
    limited.nprobe = 16;
    limited.max_codes = 300;
    same_in_both_modes(*ivf, {ivf.get()}, "max_codes", 40, 10, &limited);

    std::vector<idx_t> some;
    for (idx_t i = 0; i < 5000; i += 3) {
        some.push_back(i);
    }
    faiss::IDSelectorBatch batch(some.size(), some.data());
    faiss::IDSelectorRange sorted(100, 2000, /*assume_sorted=*/true);
    faiss::IDSelectorRange unsorted(100, 2000);
    for (const faiss::IDSelector* sel :
         {(const faiss::IDSelector*)&batch,
          (const faiss::IDSelector*)&sorted,
          (const faiss::IDSelector*)&unsorted}) {
        faiss::SearchParametersIVF p;
        p.nprobe = 16;
        p.sel = const_cast<faiss::IDSelector*>(sel);
        same_in_both_modes(*ivf, {ivf.get()}, "selector", 40, 10, &p);
    }
    // max_codes with a sorted range: the one combination FAISS counts
    // differently; it runs FAISS's own loop (as mode 0), same answers.
    faiss::SearchParametersIVF both;
    both.nprobe = 16;
    both.max_codes = 300;
    both.sel = &sorted;
    std::vector<float> d0(400), d1(400);
    std::vector<idx_t> i0(400), i1(400);
    ivf->parallel_mode = 0;
    reference_search(
            *ivf,
            40,
            data().queries.data(),
            10,
            d0.data(),
            i0.data(),
            &both);
    ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
    const uint64_t before_fallback = tasks();
    ivf->search(40, data().queries.data(), 10, d1.data(), i1.data(), &both);
    EXPECT_EQ(tasks(), before_fallback) << "FAISS's own search should run";
    expect_same_results(40, 10, d0, i0, d1, i1, "max_codes + sorted range");

    // PARALLEL_MODE_NO_HEAP_INIT: search_preassigned accumulates into the
    // caller's heaps, here over two halves of the probes (as FAISS's
    // ivflib search_single_scan does with blocks of lists).
    const idx_t n = 30, k = 10;
    const size_t nprobe = 16;
    std::vector<idx_t> keys(n * nprobe);
    std::vector<float> cdis(n * nprobe);
    ivf->quantizer->search(
            n,
            data().queries.data(),
            nprobe,
            cdis.data(),
            keys.data());
    auto accumulate = [&](int mode,
                          std::vector<float>& d,
                          std::vector<idx_t>& l) {
        ivf->parallel_mode = mode | ivf->PARALLEL_MODE_NO_HEAP_INIT;
        for (idx_t q = 0; q < n; q++) {
            faiss::maxheap_heapify(k, d.data() + q * k, l.data() + q * k);
        }
        for (int half = 0; half < 2; half++) {
            std::vector<idx_t> part = keys;
            for (idx_t q = 0; q < n; q++) {
                for (size_t p = 0; p < nprobe; p++) {
                    if ((p < nprobe / 2) != (half == 0)) {
                        part[q * nprobe + p] = -1;
                    }
                }
            }
            faiss::SearchParametersIVF sp;
            sp.nprobe = nprobe;
            ivf->search_preassigned(
                    n,
                    data().queries.data(),
                    k,
                    part.data(),
                    cdis.data(),
                    d.data(),
                    l.data(),
                    false,
                    &sp);
        }
        for (idx_t q = 0; q < n; q++) {
            faiss::maxheap_reorder(k, d.data() + q * k, l.data() + q * k);
        }
    };
    std::vector<float> dr(n * k), dg(n * k);
    std::vector<idx_t> lr(n * k), lg(n * k);
    accumulate(0, dr, lr);
    const uint64_t before = tasks();
    accumulate(faiss::PARALLEL_MODE_CCD, dg, lg);
    EXPECT_GT(tasks(), before);
    expect_same_results(n, k, dr, lr, dg, lg, "NO_HEAP_INIT");
}

// IndexIVFPQR (re-ranks store_pairs results) and IndexIVFFlatDedup (adds
// duplicates) keep their own search_preassigned around the pool's scans.
// PQ8 rather than PQ4: with 4 bytes many of these clustered vectors share
// a code, and a tie at the k * k_factor-th coarse candidate lets either
// side re-rank a different shortlist (stock FAISS's modes differ alike).
TEST_F(ModeCCD, PQRAndDedup) {
    std::unique_ptr<faiss::Index> pqr(
            faiss::index_factory(kDim, "IVF32,PQ8+8"));
    pqr->train(4000, data().train.data());
    pqr->add(5000, data().base.data());
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(pqr.get());
    ivf->nprobe = 8;
    same_in_both_modes(*pqr, {ivf}, "IVF32,PQ8+8");

    faiss::IndexFlatL2 quantizer(kDim);
    faiss::IndexIVFFlatDedup dedup(&quantizer, kDim, 32);
    dedup.train(4000, data().train.data());
    std::vector<float> twice(
            data().base.begin(),
            data().base.begin() + 1000 * kDim);
    twice.insert(twice.end(), twice.begin(), twice.end());
    dedup.add(2000, twice.data());
    dedup.nprobe = 8;
    same_in_both_modes(dedup, {&dedup}, "IVFFlatDedup");
}

// Ties: with one-byte codes most distances tie, yet the CCD mode answers
// the same every run, whatever order the tasks finish in (oversubscribed
// workers and list-major or query-major shapes vary it), and ties aside the
// same as mode 0. FAISS's own tests compare two such searches exactly.
TEST_F(ModeCCD, SameAnswerEveryRunUnderTies) {
    std::unique_ptr<faiss::Index> index(
            faiss::index_factory(kDim, "IVF32,PQ2x4"));
    index->train(4000, data().train.data());
    index->add(5000, data().base.data());
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(index.get());
    ivf->nprobe = 16;
    const idx_t n = 100, k = 20;
    same_in_both_modes(*index, {ivf}, "IVF32,PQ2x4", n, k);
    std::vector<float> d_first(n * k), d(n * k);
    std::vector<idx_t> i_first(n * k), i(n * k);
    index->search(n, data().queries.data(), k, d_first.data(), i_first.data());
    for (const char* spec : {"2x1", "4x2", "1x3"}) {
        Runtime::set_default(make_runtime(spec));
        for (int rep = 0; rep < 10; rep++) {
            SearchParametersIVFCCD p;
            p.nprobe = 16;
            p.list_major_min_batch = rep % 2 ? 1 : 1000;
            p.split_factor = rep % 3 ? 4.0 : 0.5;
            p.min_chunk = 16;
            index->search(n, data().queries.data(), k, d.data(), i.data(), &p);
            ASSERT_EQ(d, d_first) << spec << " rep " << rep;
            ASSERT_EQ(i, i_first) << spec << " rep " << rep;
        }
    }
}

// A batch in the CCD mode holds OpenBLAS (when it is the BLAS) to one
// thread: its quantizer call would otherwise wake OpenBLAS's threads on
// top of the pool's workers.
TEST_F(ModeCCD, BatchHoldsOpenBlasToOneThread) {
    using GetThreads = int (*)();
    auto get = reinterpret_cast<GetThreads>(
            dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    if (get == nullptr) {
        GTEST_SKIP() << "the BLAS is not OpenBLAS";
    }
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
    const idx_t n = 64; // above distance_compute_blas_threshold
    std::vector<float> d(n * 10);
    std::vector<idx_t> l(n * 10);
    ivf->search(n, data().queries.data(), 10, d.data(), l.data());
    EXPECT_EQ(get(), 1);
}

// A batch whose measured quantizer time pays for hand-offs quantizes in
// slices on the pool, unless the index's distances carry the coarse
// distances (IVFPQ by residual with its tables, SQ by residual with inner
// product), whose last bits a cut changes; either way the answers are
// those of the reference's one quantizer call.
TEST_F(ModeCCD, SlicedCoarseAssignmentAnswersAsOneCall) {
    struct Case {
        const char* key;
        faiss::MetricType metric;
        bool sliced;
    };
    for (const idx_t n : {1000, 777, 130}) {
        for (const Case& c :
             {Case{"IVF32,Flat", faiss::METRIC_L2, true},
              Case{"IVF32,SQ8", faiss::METRIC_L2, true},
              Case{"IVF32,Flat", faiss::METRIC_INNER_PRODUCT, true},
              Case{"IVF32,PQ8", faiss::METRIC_L2, false},
              Case{"IVF32,SQ8", faiss::METRIC_INNER_PRODUCT, false}}) {
            auto ivf = make_index(c.key, c.metric);
            ivf->nprobe = 4;
            // A measured cost of 1 ms a query: slices pay for any hand-off.
            faiss::ccd::note_coarse_cost(table_id_of(*ivf), 1e6, 1);
            const size_t before = faiss::ccd::ivf_ccd_stats.coarse_slices;
            const std::string what = std::string(c.key) +
                    (c.metric == faiss::METRIC_L2 ? " L2" : " IP") + " n " +
                    std::to_string(n);
            same_in_both_modes(*ivf, {ivf.get()}, what, n, 10);
            const size_t slices =
                    faiss::ccd::ivf_ccd_stats.coarse_slices - before;
            if (c.sliced) {
                EXPECT_GT(slices, 1u) << what << ": not sliced";
            } else {
                EXPECT_EQ(slices, 0u) << what << ": sliced";
            }
        }
    }
}

// FAISS's own loops in the CCD mode (FallbackTeam): at most n threads for
// n queries while it lives, the thread's count back after.
TEST_F(ModeCCD, FallbackTeamHoldsTheTeamToTheQueries) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(4);
    {
        const FallbackTeam team(true, 1);
        EXPECT_EQ(omp_get_max_threads(), 1); // a region's team size
    }
    EXPECT_EQ(omp_get_max_threads(), 4);
    {
        const FallbackTeam team(true, 3);
        EXPECT_EQ(omp_get_max_threads(), 3);
    }
    {
        const FallbackTeam off(false, 1), wide(true, 64);
        EXPECT_EQ(omp_get_max_threads(), 4);
    }
    EXPECT_EQ(omp_get_max_threads(), 4);
    omp_set_num_threads(saved);
}

// SearchParametersIVFCCD: one call through a given runtime, whatever the
// index's own mode, with the task shape it names.
TEST_F(ModeCCD, PerCallParameters) {
    auto ivf = make_index("IVF32,SQ8", faiss::METRIC_L2);
    auto other = make_runtime("1x1");
    SearchParametersIVFCCD p;
    p.nprobe = 8;
    p.runtime = other.get();
    p.split_factor = 0.5;
    p.chunk_factor = 0.25;
    p.min_chunk = 16;
    faiss::SearchParametersIVF plain;
    plain.nprobe = 8;
    std::vector<float> d0(400), d1(400);
    std::vector<idx_t> i0(400), i1(400);
    reference_search(
            *ivf,
            40,
            data().queries.data(),
            10,
            d0.data(),
            i0.data(),
            &plain);
    EXPECT_EQ(ivf->parallel_mode, 0);
    p.helpers = 2; // helpers on `other`, whatever the cost model says
    const uint64_t before = other->pool().stats().tasks_run();
    const uint64_t default_before = default_pool_tasks();
    const size_t units_before = faiss::ccd::ivf_ccd_stats.units;
    ivf->search(40, data().queries.data(), 10, d1.data(), i1.data(), &p);
    other->pool().wait_idle();
    EXPECT_GT(other->pool().stats().tasks_run(), before)
            << "no helper ran on the call's runtime";
    // 40 queries on one worker: shared query by query (ScanPlan::by_query,
    // one CCD: one unit per query), lists not cut.
    EXPECT_EQ(faiss::ccd::ivf_ccd_stats.units - units_before, 40u);
    EXPECT_EQ(default_pool_tasks(), default_before)
            << "the default pool was used";
    expect_same_results(40, 10, d0, i0, d1, i1, "SearchParametersIVFCCD");

    // One query shared with helpers: its lists are cut in chunks.
    const size_t one_before = faiss::ccd::ivf_ccd_stats.units;
    ivf->search(1, data().queries.data(), 10, d1.data(), i1.data(), &p);
    EXPECT_GT(faiss::ccd::ivf_ccd_stats.units - one_before, 8u)
            << "lists were not split";
    expect_same_results(1, 10, d0, i0, d1, i1, "one query, split");
}

// A small batch with helpers is shared query by query: each unit holds a
// run of one query's scans of lists on one CCD, so participants seldom
// merge into the same query's heap at once (on one CCD: one unit per
// query, never).
TEST_F(ModeCCD, SmallBatchSharedByQuery) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    faiss::SearchParametersIVF plain;
    plain.nprobe = 8;
    const idx_t n = 12, k = 10;
    std::vector<float> d0(n * k), d1(n * k);
    std::vector<idx_t> i0(n * k), i1(n * k);
    reference_search(
            *ivf,
            n,
            data().queries.data(),
            k,
            d0.data(),
            i0.data(),
            &plain);
    for (const char* spec : {"1x2", "2x1", "4x2"}) {
        auto rt = make_runtime(spec);
        SearchParametersIVFCCD p;
        p.nprobe = 8;
        p.runtime = rt.get();
        p.helpers = 1;
        const size_t units_before = faiss::ccd::ivf_ccd_stats.units;
        const size_t calls_before = faiss::ccd::ivf_ccd_stats.calls;
        const idx_t batch = idx_t(rt->pool().num_workers()) + 1;
        for (idx_t b = 0; b < n; b += batch) {
            const idx_t m = std::min(batch, n - b);
            ivf->search(
                    m,
                    data().queries.data() + b * kDim,
                    k,
                    d1.data() + b * k,
                    i1.data() + b * k,
                    &p);
        }
        const size_t units = faiss::ccd::ivf_ccd_stats.units - units_before;
        const size_t calls = faiss::ccd::ivf_ccd_stats.calls - calls_before;
        // One unit per query on one CCD; with more, one per run of a
        // query's probes on the same CCD. Scan by scan would give n * 8.
        if (rt->pool().topology().num_ccds() == 1) {
            EXPECT_EQ(units, size_t(n)) << spec;
        } else {
            EXPECT_GE(units, size_t(n)) << spec;
            EXPECT_LT(units, size_t(n) * 8) << spec;
        }
        EXPECT_GE(calls, size_t(1)) << spec;
        expect_same_results(n, k, d0, i0, d1, i1, spec);
    }
}

TEST_F(ModeCCD, DefaultModeForNewAndReadIndexes) {
    auto saved = make_index("IVF32,Flat", faiss::METRIC_L2);
    saved->nprobe = 8;
    char path[] = "/tmp/faiss_ccd_mode_XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    faiss::write_index(saved.get(), path);

    EXPECT_EQ(default_parallel_mode(), 0);
    set_default_parallel_mode(faiss::PARALLEL_MODE_CCD);
    std::unique_ptr<faiss::Index> made(
            faiss::index_factory(kDim, "IVF16,Flat"));
    EXPECT_EQ(
            dynamic_cast<faiss::IndexIVF*>(made.get())->parallel_mode,
            faiss::PARALLEL_MODE_CCD);
    std::unique_ptr<faiss::Index> read(faiss::read_index(path));
    auto* read_ivf = dynamic_cast<faiss::IndexIVF*>(read.get());
    EXPECT_EQ(read_ivf->parallel_mode, faiss::PARALLEL_MODE_CCD);
    EXPECT_EQ(saved->parallel_mode, 0); // existing indexes keep theirs
    same_in_both_modes(*read, {read_ivf}, "read_index");
    std::remove(path);

    EXPECT_THROW(set_default_parallel_mode(5), faiss::FaissException);
    EXPECT_THROW(set_default_parallel_mode(-1), faiss::FaissException);
    EXPECT_EQ(default_parallel_mode(), faiss::PARALLEL_MODE_CCD);
}

// Values IndexIVF does not support: a FaissException from the search,
// where FAISS 1.7.3 would throw inside an OpenMP region and abort.
TEST_F(ModeCCD, UnsupportedModesThrow) {
    auto ivf = make_index("IVF32,Flat", faiss::METRIC_L2);
    std::vector<float> d(10);
    std::vector<idx_t> l(10);
    for (int mode : {4, 7, -1, faiss::PARALLEL_MODE_CCD | 1}) {
        ivf->parallel_mode = mode;
        EXPECT_THROW(
                ivf->search(1, data().queries.data(), 10, d.data(), l.data()),
                faiss::FaissException)
                << mode;
    }
    ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
    ivf->search(1, data().queries.data(), 10, d.data(), l.data());

    // FAISS's range loop runs modes 0-2 only, and aborted on the others.
    for (int mode : {3, ivf->PARALLEL_MODE_NO_HEAP_INIT, 7}) {
        ivf->parallel_mode = mode;
        faiss::RangeSearchResult r(1);
        EXPECT_THROW(
                ivf->range_search(1, data().queries.data(), 1.0f, &r),
                faiss::FaissException)
                << mode;
    }
    for (int mode :
         {0,
          1,
          2,
          faiss::PARALLEL_MODE_CCD,
          faiss::PARALLEL_MODE_CCD | ivf->PARALLEL_MODE_NO_HEAP_INIT}) {
        ivf->parallel_mode = mode;
        faiss::RangeSearchResult r(1);
        EXPECT_NO_THROW(ivf->range_search(1, data().queries.data(), 1.0f, &r))
                << mode;
    }
}

// An index without an InvertedListScanner (the FastScan family) in the
// CCD mode: its own k-NN search; a range search throws (FAISS's loop
// would abort inside OpenMP).
TEST_F(ModeCCD, IndexWithoutScanner) {
    std::unique_ptr<faiss::Index> index(
            faiss::index_factory(kDim, "IVF32,PQ4x4fs"));
    index->train(4000, data().train.data());
    index->add(5000, data().base.data());
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(index.get());
    ivf->nprobe = 8;
    std::vector<float> d0(400), d1(400);
    std::vector<idx_t> i0(400), i1(400);
    index->search(40, data().queries.data(), 10, d0.data(), i0.data());
    ivf->parallel_mode = faiss::PARALLEL_MODE_CCD;
    index->search(40, data().queries.data(), 10, d1.data(), i1.data());
    EXPECT_EQ(d0, d1);
    EXPECT_EQ(i0, i1);
    faiss::RangeSearchResult r(1);
    EXPECT_THROW(
            index->range_search(1, data().queries.data(), 1.0f, &r),
            faiss::FaissException);
}

} // namespace
