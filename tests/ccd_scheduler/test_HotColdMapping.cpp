// Mapping: hot-cold placement (the paper's Algorithm 1), its
// migration-aware variant, and the MappingSnapshot lookup table.

#include <faiss/ccd_scheduler/HotColdMapping.h>
#include <faiss/ccd_scheduler/Mapping.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>

using namespace faiss::ccd;

namespace {

std::vector<uint64_t> zipf(int n, double s, double scale = 1e12) {
    std::vector<uint64_t> t(n);
    for (int i = 0; i < n; i++) {
        t[i] = uint64_t(scale / std::pow(i + 1, s));
    }
    // Shuffle: the placement must not rely on sorted input.
    std::mt19937 rng(5);
    std::shuffle(t.begin(), t.end(), rng);
    return t;
}

/// lower_bound: no placement beats max(mean, hottest item) per CCD.
double lower_bound_imbalance(const std::vector<uint64_t>& t, int nccd) {
    long double total = std::accumulate(t.begin(), t.end(), (long double)0);
    uint64_t hottest = *std::max_element(t.begin(), t.end());
    return std::max(1.0, double(hottest / (total / nccd)));
}

TEST(MappingHotCold, EveryIdPlacedOnceInRange) {
    auto t = zipf(8192, 1.1);
    auto c = map_hot_cold(t, 12);
    ASSERT_EQ(c.size(), t.size());
    for (int ccd : c) {
        ASSERT_GE(ccd, 0);
        ASSERT_LT(ccd, 12);
    }
    // Loads add up to the total: nothing lost, nothing counted twice.
    auto loads = ccd_loads(t, c, 12);
    EXPECT_EQ(
            std::accumulate(loads.begin(), loads.end(), uint64_t(0)),
            std::accumulate(t.begin(), t.end(), uint64_t(0)));
}

// The issue asks for max/mean <= 1.05 on Zipf(1.1) over 8192 ids and 12
// CCDs. The hottest of those ids alone carries 1.84x a CCD's mean share,
// so no placement can get below 1.84 there; the meaningful bound is 1.05
// times the lower bound max(1, hottest / mean). Where the bound is 1
// (Zipf 0.8, or 4 CCDs) that is the 1.05 asked for.
TEST(MappingHotCold, ZipfBalanceWithinFivePercentOfTheBound) {
    for (double s : {0.8, 1.1}) {
        for (int nccd : {4, 8, 12}) {
            auto t = zipf(8192, s);
            auto loads = ccd_loads(t, map_hot_cold(t, nccd), nccd);
            const double bound = lower_bound_imbalance(t, nccd);
            EXPECT_LE(imbalance(loads), 1.05 * bound)
                    << "s=" << s << " nccd=" << nccd << " bound=" << bound;
            if (s == 0.8 || nccd == 4) {
                EXPECT_LE(imbalance(loads), 1.05);
            }
        }
    }
}

TEST(MappingHotCold, HottestIdsNeverShareACcd) {
    auto t = zipf(8192, 1.1);
    auto c = map_hot_cold(t, 12);
    std::vector<size_t> order(t.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return t[a] > t[b];
    });
    std::set<int> used;
    for (int i = 0; i < 12; i++) {
        EXPECT_TRUE(used.insert(c[order[i]]).second)
                << "hot id #" << i << " shares CCD " << c[order[i]];
    }
}

TEST(MappingHotCold, FewerIdsThanCcdsEachAlone) {
    std::vector<uint64_t> t = {50, 10, 30, 20, 40};
    auto c = map_hot_cold(t, 8);
    EXPECT_EQ(std::set<int>(c.begin(), c.end()).size(), t.size());
}

TEST(MappingHotCold, PairsHotWithCold) {
    // Two CCDs, mu = 100: 90 goes with 10, 60 with 40 — hot beside cold.
    std::vector<uint64_t> t = {90, 60, 40, 10};
    auto c = map_hot_cold(t, 2);
    EXPECT_EQ(c[0], c[3]);
    EXPECT_EQ(c[1], c[2]);
    EXPECT_NE(c[0], c[1]);
}

TEST(MappingHotCold, EdgeCases) {
    EXPECT_TRUE(map_hot_cold({}, 4).empty());
    EXPECT_THROW(map_hot_cold({1, 2}, 0), std::invalid_argument);
    auto c = map_hot_cold({0, 0, 0, 0, 0}, 3); // no traffic at all
    for (int x : c) {
        EXPECT_GE(x, 0);
        EXPECT_LT(x, 3);
    }
    EXPECT_DOUBLE_EQ(imbalance({0, 0, 0}), 1.0);
    EXPECT_DOUBLE_EQ(imbalance({2, 2}), 1.0);
    EXPECT_DOUBLE_EQ(imbalance({3, 1}), 1.5);
}

// After a small drift, the migration-aware variant keeps balance close and
// moves much less traffic than re-placing from scratch.
TEST(MappingMigrationAware, MovesLessAfterSmallDrift) {
    auto t = zipf(4096, 0.8);
    const int nccd = 12;
    auto current = map_hot_cold(t, nccd);
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> jitter(0.9, 1.1);
    std::vector<uint64_t> drifted(t.size());
    for (size_t i = 0; i < t.size(); i++) {
        drifted[i] = uint64_t(t[i] * jitter(rng));
    }
    auto moved = [&](const std::vector<int>& next) {
        uint64_t m = 0;
        for (size_t i = 0; i < t.size(); i++) {
            m += next[i] != current[i] ? drifted[i] : 0;
        }
        return m;
    };
    auto fresh = map_hot_cold(drifted, nccd);
    auto sticky = map_migration_aware(drifted, current, nccd, 0.05);
    const double fresh_imb = imbalance(ccd_loads(drifted, fresh, nccd));
    const double sticky_imb = imbalance(ccd_loads(drifted, sticky, nccd));
    EXPECT_LT(moved(sticky), moved(fresh) / 2)
            << "sticky moved " << moved(sticky) << " fresh " << moved(fresh);
    EXPECT_LE(sticky_imb, fresh_imb + 0.10);
    EXPECT_THROW(map_migration_aware(t, {1, 2}, nccd), std::invalid_argument);
}

TEST(MappingSnapshot, LookupAndHashFallback) {
    std::vector<MappingId> ids;
    std::vector<int> ccds;
    for (uint32_t l = 0; l < 1000; l++) {
        ids.push_back(make_mapping_id(4, l));
        ccds.push_back(int(l % 7));
    }
    MappingSnapshot snap(ids, ccds, 7);
    EXPECT_EQ(snap.size(), 1000u);
    for (uint32_t l = 0; l < 1000; l++) {
        EXPECT_EQ(snap.pick_ccd(make_mapping_id(4, l), 7), int(l % 7));
    }
    HashMapping hash;
    for (uint32_t l = 0; l < 100; l++) {
        MappingId unseen = make_mapping_id(5, l);
        EXPECT_EQ(snap.find(unseen), -1);
        EXPECT_EQ(snap.pick_ccd(unseen, 7), hash.pick_ccd(unseen, 7));
    }
    EXPECT_THROW(MappingSnapshot({1, 1}, {0, 0}, 2), std::invalid_argument);
    EXPECT_THROW(MappingSnapshot({1}, {2}, 2), std::invalid_argument);
    EXPECT_THROW(MappingSnapshot({1, 2}, {0}, 2), std::invalid_argument);
}

} // namespace
