// ResolvedCall (faiss/ivf_ccd/): a CCD-mode call is decided once. The
// scanners a search makes are counted through an index that counts its
// get_InvertedListScanner calls; answers are compared with parallel mode
// 0 of the same index. The thread's call in progress is taken by its own
// scans only, and only once.

#include <faiss/IVFSearchCCD.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/ivf_ccd/ResolvedCall.h>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "ivf_test_util.h"

using namespace ivf_test;

namespace {

/// CountingIVF: an IndexIVFFlat that counts the scanners made of it.
struct CountingIVF : faiss::IndexIVFFlat {
    mutable std::atomic<int> scanners{0};
    CountingIVF(faiss::Index* quantizer, size_t nlist)
            : faiss::IndexIVFFlat(quantizer, kDim, nlist) {}
    faiss::InvertedListScanner* get_InvertedListScanner(
            bool store_pairs,
            const faiss::IDSelector* sel) const override {
        scanners++;
        return faiss::IndexIVFFlat::get_InvertedListScanner(store_pairs, sel);
    }
};

class ResolvedCallTest : public ::testing::Test {
   protected:
    void SetUp() override {
        runtime_ = make_runtime("2x1");
        Runtime::set_default(runtime_);
        index_ = std::make_unique<CountingIVF>(&quantizer_, 32);
        index_->train(4000, data().train.data());
        index_->add(5000, data().base.data());
        index_->nprobe = 8;
    }
    void TearDown() override {
        Runtime::set_default(nullptr);
    }

    /// reference: mode 0's answer for the first n queries.
    void reference(idx_t n, std::vector<float>& d, std::vector<idx_t>& l) {
        index_->parallel_mode = 0;
        d.resize(n * kK);
        l.resize(n * kK);
        index_->search(n, data().queries.data(), kK, d.data(), l.data());
        index_->parallel_mode = faiss::PARALLEL_MODE_CCD;
    }

    static constexpr idx_t kK = 10;
    faiss::IndexFlatL2 quantizer_{kDim};
    std::unique_ptr<CountingIVF> index_;
    std::shared_ptr<Runtime> runtime_;
};

// The call's own scanner count: IndexIVF::search asks uses_ccd_mode (one
// scanner, to learn the call is servable), then the one participant
// (helpers 0) makes its own; the scans that come back through the index's
// search_preassigned decide nothing again.
TEST_F(ResolvedCallTest, SearchMakesOneScannerPerParticipant) {
    std::vector<float> d0, d1(kK);
    std::vector<idx_t> l0, l1(kK);
    reference(1, d0, l0);
    SearchParametersIVFCCD alone;
    alone.nprobe = 8;
    alone.helpers = 0;
    index_->scanners = 0;
    index_->search(1, data().queries.data(), kK, d1.data(), l1.data(), &alone);
    EXPECT_EQ(index_->scanners.load(), 2);
    expect_same_results(1, kK, d0, l0, d1, l1, "alone");
}

// A direct search_preassigned gives its servability probe to the first
// participant: one scanner in all.
TEST_F(ResolvedCallTest, PreassignedGivesItsProbeToTheFirstParticipant) {
    const idx_t n = 4;
    std::vector<float> d0, d1(n * kK), coarse(n * 8);
    std::vector<idx_t> l0, l1(n * kK), keys(n * 8);
    reference(n, d0, l0);
    quantizer_.search(n, data().queries.data(), 8, coarse.data(), keys.data());
    SearchParametersIVFCCD alone;
    alone.nprobe = 8;
    alone.helpers = 0;
    index_->scanners = 0;
    index_->search_preassigned(
            n,
            data().queries.data(),
            kK,
            keys.data(),
            coarse.data(),
            d1.data(),
            l1.data(),
            false,
            &alone);
    EXPECT_EQ(index_->scanners.load(), 1);
    expect_same_results(n, kK, d0, l0, d1, l1, "preassigned");
}

// Shared with helpers, each participant still makes one: at most the
// probe plus one per participant (the caller and two workers).
TEST_F(ResolvedCallTest, SharedSearchMakesAtMostOnePerParticipant) {
    const idx_t n = 64;
    std::vector<float> d0, d1(n * kK);
    std::vector<idx_t> l0, l1(n * kK);
    reference(n, d0, l0);
    SearchParametersIVFCCD shared;
    shared.nprobe = 8;
    shared.helpers = 1;
    shared.list_major_min_batch = 0;
    index_->scanners = 0;
    const uint64_t before = runtime_->pool().stats().tasks_run();
    index_->search(n, data().queries.data(), kK, d1.data(), l1.data(), &shared);
    runtime_->pool().wait_idle();
    EXPECT_GT(runtime_->pool().stats().tasks_run(), before);
    EXPECT_GE(index_->scanners.load(), 2);
    EXPECT_LE(index_->scanners.load(), 1 + 3);
    expect_same_results(n, kK, d0, l0, d1, l1, "shared");
}

TEST_F(ResolvedCallTest, RangeSearchMakesOneScannerPerParticipant) {
    // A radius that holds about k neighbours of each query.
    std::vector<float> d;
    std::vector<idx_t> l;
    reference(4, d, l);
    const float radius = d[kK - 1];
    faiss::RangeSearchResult r0(4), r1(4);
    index_->parallel_mode = 0;
    index_->range_search(4, data().queries.data(), radius, &r0);
    index_->parallel_mode = faiss::PARALLEL_MODE_CCD;
    SearchParametersIVFCCD alone;
    alone.nprobe = index_->nprobe;
    alone.helpers = 0;
    index_->scanners = 0;
    index_->range_search(4, data().queries.data(), radius, &r1, &alone);
    EXPECT_EQ(index_->scanners.load(), 2);
    ASSERT_GT(r0.lims[4], 0u) << "a radius that finds nothing tests nothing";
    ASSERT_EQ(r0.lims[4], r1.lims[4]);
    for (int q = 0; q <= 4; q++) {
        EXPECT_EQ(r0.lims[q], r1.lims[q]);
    }
}

// The thread's call in progress goes to the first scans that come back,
// and only if they are its own (same index, parameters, store_pairs):
// whatever arrives first consumes it, so nothing after (a search nested in
// a wait of the call) can find it.
TEST_F(ResolvedCallTest, CurrentIsTakenOnceAndOnlyByItsOwnScans) {
    using faiss::ccd::ivf::ResolvedCall;
    faiss::IndexFlatL2 q2(kDim);
    CountingIVF other(&q2, 32);
    const ResolvedCall call(*index_, nullptr, false);
    EXPECT_EQ(ResolvedCall::take_current(*index_, nullptr, false), nullptr);
    {
        const ResolvedCall::Current current(call);
        EXPECT_EQ(ResolvedCall::take_current(other, nullptr, false), nullptr);
        EXPECT_EQ(ResolvedCall::take_current(*index_, nullptr, false), nullptr)
                << "a mismatch consumes it";
    }
    {
        const ResolvedCall::Current current(call);
        EXPECT_EQ(ResolvedCall::take_current(*index_, nullptr, true), nullptr)
                << "store_pairs differs";
    }
    SearchParametersIVFCCD params;
    {
        const ResolvedCall::Current current(call);
        EXPECT_EQ(ResolvedCall::take_current(*index_, &params, false), nullptr)
                << "parameters differ";
    }
    {
        const ResolvedCall::Current current(call);
        EXPECT_EQ(ResolvedCall::take_current(*index_, nullptr, false), &call);
        EXPECT_EQ(ResolvedCall::take_current(*index_, nullptr, false), nullptr)
                << "taken once";
    }
    // Nested: the inner call while it lives, then the outer one again.
    const ResolvedCall inner(other, nullptr, false);
    {
        const ResolvedCall::Current outer_current(call);
        {
            const ResolvedCall::Current inner_current(inner);
            EXPECT_EQ(
                    ResolvedCall::take_current(other, nullptr, false),
                    &inner);
        }
        EXPECT_EQ(ResolvedCall::take_current(*index_, nullptr, false), &call);
    }
    EXPECT_EQ(ResolvedCall::take_current(*index_, nullptr, false), nullptr);
}

} // namespace
