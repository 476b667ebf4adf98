/**
 * Tests for Mapping.h: HashMapping is stable, in range, and spreads the
 * ids of a realistic deployment evenly over the CCDs.
 */

#include <faiss/ccd_scheduler/Mapping.h>
#include <faiss/ccd_scheduler/MappingId.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

using faiss::ccd::HashMapping;
using faiss::ccd::make_mapping_id;
using faiss::ccd::MappingId;

TEST(HashMapping, StableAndInRange) {
    const HashMapping a, b; // two objects: the answer is a pure function
    EXPECT_EQ(a.name(), "hash");
    std::mt19937_64 rng(99);
    std::vector<MappingId> ids = {
            0,
            1,
            faiss::ccd::kLocalMappingId,
            make_mapping_id(0, 0),
            make_mapping_id(0xfffffffe, 0xffffffff)};
    for (int i = 0; i < 2000; i++) {
        ids.push_back(rng());
    }
    for (int num_ccds = 1; num_ccds <= 13; num_ccds++) {
        for (MappingId id : ids) {
            const int c = a.pick_ccd(id, num_ccds);
            ASSERT_GE(c, 0) << "id " << id << " num_ccds " << num_ccds;
            ASSERT_LT(c, num_ccds) << "id " << id << " num_ccds " << num_ccds;
            ASSERT_EQ(a.pick_ccd(id, num_ccds), c);
            ASSERT_EQ(b.pick_ccd(id, num_ccds), c);
        }
    }
}

TEST(HashMapping, UsesEveryCcd) {
    const HashMapping p;
    for (int num_ccds = 1; num_ccds <= 13; num_ccds++) {
        std::vector<int> hits(size_t(num_ccds), 0);
        for (uint32_t list = 0; list < 1000; list++) {
            hits[size_t(p.pick_ccd(make_mapping_id(3, list), num_ccds))]++;
        }
        for (int c = 0; c < num_ccds; c++) {
            EXPECT_GT(hits[size_t(c)], 0)
                    << "ccd " << c << " of " << num_ccds << " never chosen";
        }
    }
}

TEST(HashMapping, RoughlyUniformOverTwelveCcds) {
    // 15 tables of 8192 IVF lists each over 12 CCDs: every CCD gets within
    // 10% of the mean (10240 ids).
    const HashMapping p;
    const int num_ccds = 12;
    std::vector<int64_t> hits(num_ccds, 0);
    int64_t total = 0;
    for (uint32_t t = 0; t < 15; t++) {
        for (uint32_t l = 0; l < 8192; l++) {
            hits[size_t(p.pick_ccd(make_mapping_id(t, l), num_ccds))]++;
            total++;
        }
    }
    const double mean = double(total) / num_ccds;
    for (int c = 0; c < num_ccds; c++) {
        EXPECT_GE(double(hits[size_t(c)]), 0.9 * mean) << "ccd " << c;
        EXPECT_LE(double(hits[size_t(c)]), 1.1 * mean) << "ccd " << c;
    }
    // Each table on its own is spread too (no table lands on one CCD).
    for (uint32_t t = 0; t < 15; t++) {
        std::vector<int64_t> per(num_ccds, 0);
        for (uint32_t l = 0; l < 8192; l++) {
            per[size_t(p.pick_ccd(make_mapping_id(t, l), num_ccds))]++;
        }
        for (int c = 0; c < num_ccds; c++) {
            EXPECT_GE(double(per[size_t(c)]), 0.75 * 8192 / num_ccds)
                    << "table " << t << " ccd " << c;
        }
    }
}
