// HelperPlan: the pure helper-count policy, case by case.

#include <faiss/ccd_scheduler/HelperPlan.h>

#include <gtest/gtest.h>

namespace faiss {
namespace ccd {
namespace {

HelperPlanInput one_ccd(double work_ns, int workers, double handoff_ns) {
    HelperPlanInput in;
    in.work_ns = {work_ns};
    in.group_ccd = {0};
    in.ccd_workers = {workers};
    in.caller_ccd = 0;
    in.handoff_ns = handoff_ns;
    return in;
}

TEST(HelperPlan, SmallWorkRunsInline) {
    // Less than kPaybackFactor hand-offs of work: nobody helps.
    EXPECT_EQ(plan_helpers(one_ccd(30e3, 8, 20e3)), std::vector<int>{0});
}

TEST(HelperPlan, BigWorkGetsTheCcdLessTheCallersCore) {
    EXPECT_EQ(plan_helpers(one_ccd(1e9, 8, 20e3)), std::vector<int>{7});
    EXPECT_EQ(plan_helpers(one_ccd(1e9, 2, 20e3)), std::vector<int>{1});
}

TEST(HelperPlan, HelpersScaleWithWork) {
    // 100 us of work, 20 us hand-off: floor(100 / 40) = 2.
    EXPECT_EQ(plan_helpers(one_ccd(100e3, 8, 20e3)), std::vector<int>{2});
}

TEST(HelperPlan, OtherCallersTakeTheCores) {
    HelperPlanInput in = one_ccd(1e9, 8, 20e3);
    in.other_callers = 5; // 8 workers - 5 others - the caller = 2
    EXPECT_EQ(plan_helpers(in), std::vector<int>{2});
    in.other_callers = 7;
    EXPECT_EQ(plan_helpers(in), std::vector<int>{0});
    in.other_callers = 100;
    EXPECT_EQ(plan_helpers(in), std::vector<int>{0});
}

TEST(HelperPlan, RemoteCcdKeepsAllItsWorkersAndCutsFavourTheBiggest) {
    HelperPlanInput in;
    in.work_ns = {1e9, 1e9, 50e3};
    in.group_ccd = {0, 1, 2};
    in.ccd_workers = {4, 4, 4};
    in.caller_ccd = 0;
    in.handoff_ns = 10e3;
    // Own CCD: 3 (the caller's core), CCD 1: 4, CCD 2: floor(50/20) = 2.
    EXPECT_EQ(plan_helpers(in), (std::vector<int>{3, 4, 2}));
    in.other_callers = 6; // 12 - 6 - 1 = 5 helpers in all
    const std::vector<int> h = plan_helpers(in);
    EXPECT_EQ(h[0] + h[1] + h[2], 5);
    EXPECT_GE(h[0], 2);
    EXPECT_GE(h[1], 2);
    EXPECT_EQ(h[2], 0);
}

TEST(HelperPlan, UnknownCcdsCountTheWholePool) {
    HelperPlanInput in;
    in.work_ns = {1e9};
    in.group_ccd = {-1};
    in.ccd_workers = {2, 2};
    in.handoff_ns = 1e3;
    EXPECT_EQ(plan_helpers(in), std::vector<int>{3});
}

TEST(HelperPlan, NeverMoreHelpersThanUnitsLeft) {
    HelperPlanInput in = one_ccd(1e9, 8, 20e3);
    in.units = {1}; // the caller's one unit
    EXPECT_EQ(plan_helpers(in), std::vector<int>{0});
    in.units = {4};
    EXPECT_EQ(plan_helpers(in), std::vector<int>{3});
    in.caller_ccd = 1; // another CCD's group: all its units for helpers
    in.ccd_workers = {8, 8};
    EXPECT_EQ(plan_helpers(in), std::vector<int>{4});
}

TEST(HelperPlan, NoHandoffMeasuredYetStillCapped) {
    EXPECT_EQ(plan_helpers(one_ccd(5, 4, 0)), std::vector<int>{3});
    EXPECT_EQ(plan_helpers(one_ccd(0, 4, 0)), std::vector<int>{0});
}

} // namespace
} // namespace ccd
} // namespace faiss
