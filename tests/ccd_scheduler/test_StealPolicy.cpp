/**
 * Tests for StealPolicy.h: policy names, Permutation, CrossCcdBackoff, the
 * victim lists of each policy on emulated topologies, the cross-CCD
 * threshold, and StealConfig validation. All pure functions: no threads.
 */

#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using faiss::ccd::CrossCcdBackoff;
using faiss::ccd::Permutation;
using faiss::ccd::PolicyKind;
using faiss::ccd::StealConfig;
using faiss::ccd::StealPolicy;
using faiss::ccd::Topology;

namespace {

const PolicyKind kAllKinds[] = {
        PolicyKind::ccd,
        PolicyKind::flat_steal,
        PolicyKind::round_robin};

/// sorted: a copy of `v`, sorted (victim lists promise no order).
std::vector<int> sorted(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    return v;
}

/// range: lo, lo+1, ..., hi-1 without `except`.
std::vector<int> range(int lo, int hi, int except = -1) {
    std::vector<int> v;
    for (int i = lo; i < hi; i++) {
        if (i != except) {
            v.push_back(i);
        }
    }
    return v;
}

} // namespace

// ---- names -----------------------------------------------------------------

TEST(StealPolicyNames, RoundTrip) {
    for (PolicyKind k : kAllKinds) {
        EXPECT_EQ(faiss::ccd::policy_from_name(faiss::ccd::policy_name(k)), k)
                << faiss::ccd::policy_name(k);
    }
    EXPECT_STREQ(faiss::ccd::policy_name(PolicyKind::ccd), "ccd");
    EXPECT_STREQ(faiss::ccd::policy_name(PolicyKind::flat_steal), "flat");
    EXPECT_STREQ(faiss::ccd::policy_name(PolicyKind::round_robin), "rr");
}

TEST(StealPolicyNames, AliasesAndCase) {
    using faiss::ccd::policy_from_name;
    EXPECT_EQ(policy_from_name("CCD"), PolicyKind::ccd);
    EXPECT_EQ(policy_from_name("flat_steal"), PolicyKind::flat_steal);
    EXPECT_EQ(policy_from_name("Flat"), PolicyKind::flat_steal);
    EXPECT_EQ(policy_from_name("round_robin"), PolicyKind::round_robin);
    EXPECT_EQ(policy_from_name("RR"), PolicyKind::round_robin);
}

TEST(StealPolicyNames, BadNameThrowsAndNamesIt) {
    for (const std::string bad : {"ccx", "", "steal", "ccd "}) {
        try {
            faiss::ccd::policy_from_name(bad);
            ADD_FAILURE() << "no exception for \"" << bad << "\"";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(
                    std::string(e.what()).find("\"" + bad + "\""),
                    std::string::npos)
                    << "message does not quote \"" << bad << "\": " << e.what();
        }
    }
}

// ---- Permutation -----------------------------------------------------------

TEST(Permutation, VisitsEachIndexExactlyOnce) {
    std::mt19937_64 rng(2024);
    std::vector<uint64_t> seeds = {
            0,
            1,
            2,
            3,
            63,
            64,
            65,
            (1ull << 32) - 1,
            1ull << 32,
            (1ull << 32) + 1,
            ~0ull,
            ~0ull - 1,
            0x8000000000000000ull};
    for (int i = 0; i < 200; i++) {
        seeds.push_back(rng());
    }
    for (int n = 1; n <= 64; n++) {
        for (uint64_t seed : seeds) {
            Permutation p(n, seed);
            std::vector<int> seen(size_t(n), 0);
            for (int i = 0; i < n; i++) {
                const int v = p.at(i);
                ASSERT_GE(v, 0) << "n " << n << " seed " << seed;
                ASSERT_LT(v, n) << "n " << n << " seed " << seed;
                seen[size_t(v)]++;
            }
            for (int v = 0; v < n; v++) {
                ASSERT_EQ(seen[size_t(v)], 1)
                        << "n " << n << " seed " << seed << " index " << v;
            }
        }
    }
}

TEST(Permutation, OrdersVaryWithTheSeed) {
    // With well-mixed 64-bit seeds (the pool passes xorshift64 output), both
    // the start and the stride vary: among many seeds we see every start and
    // more than one successor of the start (so not only rotations).
    const int n = 8;
    std::mt19937_64 rng(7);
    std::set<int> starts;
    std::set<int> steps;
    for (int i = 0; i < 1000; i++) {
        Permutation p(n, rng());
        starts.insert(p.at(0));
        steps.insert((p.at(1) - p.at(0) + n) % n);
    }
    EXPECT_EQ(starts.size(), size_t(n));
    EXPECT_GE(steps.size(), 4u) << "strides coprime to 8: 1, 3, 5, 7";
}

// ---- CrossCcdBackoff -------------------------------------------------------

namespace {

/// skipped_rounds: how many should_try() in a row say no before one says
/// yes (the yes is consumed too). Gives up at `limit`.
int64_t skipped_rounds(CrossCcdBackoff& b, int64_t limit = 1 << 20) {
    int64_t skipped = 0;
    while (!b.should_try()) {
        if (++skipped >= limit) {
            break;
        }
    }
    return skipped;
}

} // namespace

TEST(CrossCcdBackoff, ExponentialAndCapped) {
    for (int max_shift : {0, 1, 3, 6}) {
        SCOPED_TRACE(max_shift);
        CrossCcdBackoff b(max_shift);
        EXPECT_EQ(b.rounds_to_skip(), 0);
        EXPECT_TRUE(b.should_try());
        EXPECT_TRUE(b.should_try()); // no failure yet: never skips
        for (int k = 1; k <= 10; k++) {
            b.on_failure();
            const int64_t want = (int64_t(1) << std::min(k, max_shift)) - 1;
            EXPECT_EQ(b.rounds_to_skip(), want) << "after " << k;
            EXPECT_EQ(skipped_rounds(b), want) << "after " << k;
            EXPECT_EQ(b.rounds_to_skip(), 0);
        }
    }
}

TEST(CrossCcdBackoff, SuccessAndResetStartOver) {
    CrossCcdBackoff b(6);
    for (int k = 0; k < 4; k++) {
        b.on_failure();
    }
    EXPECT_EQ(b.rounds_to_skip(), 15);
    EXPECT_FALSE(b.should_try());
    b.on_success();
    EXPECT_EQ(b.rounds_to_skip(), 0);
    EXPECT_TRUE(b.should_try());
    b.on_failure(); // counts from one again
    EXPECT_EQ(skipped_rounds(b), 1);

    b.on_failure();
    b.on_failure();
    EXPECT_EQ(b.rounds_to_skip(), 7);
    b.reset();
    EXPECT_EQ(b.rounds_to_skip(), 0);
    EXPECT_TRUE(b.should_try());
    b.on_failure();
    EXPECT_EQ(skipped_rounds(b), 1);
}

TEST(CrossCcdBackoff, DefaultCapIs63Rounds) {
    CrossCcdBackoff b(StealConfig().max_backoff_shift);
    for (int k = 0; k < 100; k++) {
        b.on_failure();
    }
    EXPECT_EQ(skipped_rounds(b), 63);
}

// ---- victim lists ----------------------------------------------------------

TEST(StealPolicy, CcdVictimsOn4x2) {
    Topology topo = Topology::from_spec("4x2");
    StealPolicy p(topo, PolicyKind::ccd, StealConfig());
    EXPECT_TRUE(p.steals());
    EXPECT_TRUE(p.places_by_id());
    EXPECT_EQ(p.kind(), PolicyKind::ccd);
    for (int w = 0; w < 8; w++) {
        SCOPED_TRACE(w);
        const int home = w / 2;
        ASSERT_EQ(topo.ccd_of(w), home);
        // The only sibling of an even worker is the next one, and back.
        EXPECT_EQ(p.near_victims(w), std::vector<int>{w ^ 1});
        EXPECT_EQ(sorted(p.remote_ccds(w)), range(0, 4, home));
    }
}

TEST(StealPolicy, CcdVictimsOnUnevenCcds) {
    // CCDs of 3, 1 and 4 workers: a lone worker has no near victim.
    Topology topo = Topology::from_spec("0-2;3;4-7");
    ASSERT_EQ(topo.num_ccds(), 3);
    StealPolicy p(topo, PolicyKind::ccd, StealConfig());
    for (int w = 0; w < topo.num_workers(); w++) {
        SCOPED_TRACE(w);
        const int home = topo.ccd_of(w);
        const int first = topo.first_worker(home);
        EXPECT_EQ(
                sorted(p.near_victims(w)),
                range(first, first + topo.ccd_size(home), w));
        EXPECT_EQ(sorted(p.remote_ccds(w)), range(0, 3, home));
    }
    EXPECT_TRUE(p.near_victims(3).empty());
}

TEST(StealPolicy, FlatVictimsOn4x2) {
    Topology topo = Topology::from_spec("4x2");
    StealPolicy p(topo, PolicyKind::flat_steal, StealConfig());
    EXPECT_TRUE(p.steals());
    EXPECT_FALSE(p.places_by_id());
    for (int w = 0; w < 8; w++) {
        SCOPED_TRACE(w);
        EXPECT_EQ(sorted(p.near_victims(w)), range(0, 8, w));
        EXPECT_TRUE(p.remote_ccds(w).empty());
    }
}

TEST(StealPolicy, RoundRobinNeverSteals) {
    Topology topo = Topology::from_spec("4x2");
    StealPolicy p(topo, PolicyKind::round_robin, StealConfig());
    EXPECT_FALSE(p.steals());
    EXPECT_FALSE(p.places_by_id());
    for (int w = 0; w < 8; w++) {
        EXPECT_TRUE(p.near_victims(w).empty()) << w;
        EXPECT_TRUE(p.remote_ccds(w).empty()) << w;
    }
}

TEST(StealPolicy, SingleWorker) {
    Topology topo = Topology::from_spec("1x1");
    for (PolicyKind k : kAllKinds) {
        StealPolicy p(topo, k, StealConfig());
        EXPECT_TRUE(p.near_victims(0).empty()) << faiss::ccd::policy_name(k);
        EXPECT_TRUE(p.remote_ccds(0).empty()) << faiss::ccd::policy_name(k);
    }
}

// ---- threshold and config --------------------------------------------------

namespace {

StealPolicy ccd_policy_with_threshold(const Topology& topo, int64_t t) {
    StealConfig c;
    c.cross_ccd_threshold = t;
    return StealPolicy(topo, PolicyKind::ccd, c);
}

} // namespace

TEST(StealPolicy, RemoteCcdThreshold) {
    Topology topo = Topology::from_spec("4x2");
    {
        StealPolicy p = ccd_policy_with_threshold(topo, 1);
        EXPECT_FALSE(p.remote_ccd_is_victim(1, 0));
        EXPECT_TRUE(p.remote_ccd_is_victim(1, 1));
        EXPECT_TRUE(p.remote_ccd_is_victim(1, 1000));
    }
    {
        StealPolicy p = ccd_policy_with_threshold(topo, 3);
        EXPECT_FALSE(p.remote_ccd_is_victim(1, 0));
        EXPECT_FALSE(p.remote_ccd_is_victim(1, 2));
        EXPECT_TRUE(p.remote_ccd_is_victim(1, 3));
        EXPECT_TRUE(p.remote_ccd_is_victim(1, 4));
    }
    {
        // 0 behaves as 1: an empty CCD is never worth a cross-CCD steal.
        StealPolicy p = ccd_policy_with_threshold(topo, 0);
        EXPECT_FALSE(p.remote_ccd_is_victim(1, 0));
        EXPECT_TRUE(p.remote_ccd_is_victim(1, 1));
    }
    EXPECT_EQ(StealConfig().cross_ccd_threshold, StealConfig::kCcdWorkers);
}

TEST(StealPolicy, DefaultThresholdIsEachCcdsWorkerCount) {
    // CCDs of 3, 1 and 4 workers: each is robbed once its backlog reaches
    // its own worker count; a lone worker's CCD at 1, as before.
    Topology topo = Topology::from_spec("0-2;3;4-7");
    StealPolicy p(topo, PolicyKind::ccd, StealConfig());
    const int64_t expected[] = {3, 1, 4};
    for (int c = 0; c < 3; c++) {
        SCOPED_TRACE(c);
        EXPECT_EQ(p.cross_ccd_threshold(c), expected[c]);
        EXPECT_FALSE(p.remote_ccd_is_victim(c, expected[c] - 1));
        EXPECT_TRUE(p.remote_ccd_is_victim(c, expected[c]));
    }
    // An explicit value applies to every CCD.
    StealPolicy one = ccd_policy_with_threshold(topo, 1);
    for (int c = 0; c < 3; c++) {
        EXPECT_EQ(one.cross_ccd_threshold(c), 1);
    }
}

TEST(StealPolicy, InvalidConfigThrows) {
    Topology topo = Topology::from_spec("2x2");
    auto make = [&](int64_t threshold, int shift) {
        StealConfig c;
        c.cross_ccd_threshold = threshold;
        c.max_backoff_shift = shift;
        return StealPolicy(topo, PolicyKind::ccd, c);
    };
    EXPECT_THROW(make(-2, 6), std::invalid_argument);
    EXPECT_NO_THROW(make(StealConfig::kCcdWorkers, 6));
    EXPECT_THROW(make(1, -1), std::invalid_argument);
    EXPECT_THROW(make(1, 31), std::invalid_argument);
    EXPECT_NO_THROW(make(0, 0));
    EXPECT_NO_THROW(make(1, 30));
    EXPECT_EQ(make(5, 2).config().cross_ccd_threshold, 5);
    EXPECT_EQ(make(5, 2).config().max_backoff_shift, 2);
    // Validation does not depend on the policy kind.
    StealConfig bad;
    bad.cross_ccd_threshold = -2;
    for (PolicyKind k : kAllKinds) {
        EXPECT_THROW(StealPolicy(topo, k, bad), std::invalid_argument)
                << faiss::ccd::policy_name(k);
    }
}
