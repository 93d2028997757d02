// The classifier on recorded step data (tests/data/verdict/), and the timeline: windows of steps
// classified on their own, so a run that changes bound shows both.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "verdicttestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::findEvidence;
using testutil::loadFixture;
using testutil::makeSample;
using testutil::uniformRun;

// Windows are in order, contiguous, and cover every step of the run.
void expectCoversRun(const Verdict& v, const ProfileInput& in) {
    ASSERT_FALSE(v.windows.empty());
    EXPECT_EQ(v.windows.front().first_step, in.steps.front().step);
    EXPECT_EQ(v.windows.back().last_step, in.steps.back().step);
    for (size_t i = 1; i < v.windows.size(); ++i)
        EXPECT_EQ(v.windows[i].first_step, v.windows[i - 1].last_step + 1) << "window " << i;
}

TEST(VerdictFixtures, SmallFilesWithoutPrefetchIsHighlyInputBound) {
    const ProfileInput in = loadFixture("io_bound_small_files");
    const Verdict v = classify(in);
    EXPECT_EQ(v.verdict.kind, BoundKind::Input) << v.verdict.summary;
    EXPECT_EQ(v.verdict.severity, Severity::High);
    const Evidence* input = findEvidence(v.verdict, "input_fraction");
    ASSERT_NE(input, nullptr);
    EXPECT_NEAR(input->value, 25.0, 1.0);
    EXPECT_EQ(v.verdict.first_step, 21);  // 200 steps: 20 of warm-up
    expectCoversRun(v, in);
    for (const Finding& w : v.windows) EXPECT_EQ(w.kind, BoundKind::Input) << w.first_step << ": " << w.summary;
}

TEST(VerdictFixtures, PageCacheWarmingChangesTheVerdictOverTheRun) {
    const ProfileInput in = loadFixture("page_cache_warmup");
    const Verdict v = classify(in);
    expectCoversRun(v, in);
    // Steps 1-120 read cold files (~40 % input), then the page cache serves them (~1 %).
    ASSERT_GE(v.windows.size(), 2u);
    EXPECT_EQ(v.windows.front().kind, BoundKind::Input);
    EXPECT_EQ(v.windows.front().severity, Severity::High);
    EXPECT_EQ(v.windows.front().last_step, 120);  // 20 windows of 20 steps, the first six merged
    EXPECT_EQ(v.windows.back().kind, BoundKind::Compute);
    EXPECT_EQ(v.windows.back().first_step, 121);
    ASSERT_NE(findEvidence(v.windows.front(), "input_fraction"), nullptr);
    EXPECT_GT(findEvidence(v.windows.front(), "input_fraction")->value, 35.0);
    // Over the whole run the cold start is a moderate input bound; the ops say compute beneath it.
    EXPECT_EQ(v.verdict.kind, BoundKind::Input);
    EXPECT_EQ(v.verdict.severity, Severity::Moderate);
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.front().kind, BoundKind::Compute);
}

TEST(VerdictFixtures, MirroredWithoutOverlapIsCommunicationBound) {
    const ProfileInput in = loadFixture("mirrored_comm");
    const Verdict v = classify(in);
    EXPECT_EQ(v.verdict.kind, BoundKind::Communication) << v.verdict.summary;
    EXPECT_EQ(v.verdict.severity, Severity::Moderate);
    EXPECT_NEAR(findEvidence(v.verdict, "comm_fraction")->value, 29.0, 2.0);
    EXPECT_NE(findEvidence(v.verdict, "collective_fraction"), nullptr);
    EXPECT_NE(findEvidence(v.verdict, "peer_wait_fraction"), nullptr);
    ASSERT_EQ(v.windows.size(), 1u);
    EXPECT_EQ(v.windows[0].kind, BoundKind::Communication);
}

// A window has its own overhead (at the run's share of op time in the compute phases): a run whose
// first half spends most of each step outside the ops, and whose second half does not, shows both.
TEST(VerdictTimeline, AWindowMostlyOutsideTheOpsIsOverheadBound) {
    ProfileInput in = uniformRun(200, {.compute = 0.1});
    for (size_t i = 0; i < 100; ++i) in.steps[i] = makeSample(static_cast<int64_t>(i + 1), {.compute = 0.1, .other = 0.3});
    in.roofs = testutil::roofs();
    in.ops = {testutil::opAt("adam_update", 16.0, 1.0, 8.0)};  // 80 % of the 20 s of compute phases
    const Verdict v = classify(in);
    expectCoversRun(v, in);
    // The run: 4 s of compute outside the ops and 30 s of other, of 50 s: 68 %.
    EXPECT_EQ(v.verdict.kind, BoundKind::Compute) << v.verdict.summary;
    EXPECT_NEAR(findEvidence(v.verdict, "outside_ops_fraction")->value, 68.0, 1e-6);
    ASSERT_EQ(v.windows.size(), 2u);
    EXPECT_EQ(v.windows[0].kind, BoundKind::Compute) << v.windows[0].summary;  // 80 % outside the ops
    EXPECT_EQ(v.windows[0].severity, Severity::High);
    EXPECT_EQ(v.windows[0].last_step, 100);
    EXPECT_EQ(v.windows[1].kind, BoundKind::MemoryBandwidth) << v.windows[1].summary;  // 20 %: the roofline
}

TEST(VerdictTimeline, AShortRunIsOneWindow) {
    const ProfileInput in = uniformRun(15, {.input = 0.03, .compute = 0.07});
    const Verdict v = classify(in);
    ASSERT_EQ(v.windows.size(), 1u);
    EXPECT_EQ(v.windows[0].first_step, 1);
    EXPECT_EQ(v.windows[0].last_step, 15);
    EXPECT_EQ(v.windows[0].kind, BoundKind::Input);
}

TEST(VerdictTimeline, AtMost20WindowsOfAtLeast10Steps) {
    // 200 steps whose input alternates every 10 steps: nothing merges.
    ProfileInput in = uniformRun(200, {});
    for (int64_t i = 0; i < 200; ++i) {
        const bool slow = (i / 10) % 2 == 0;
        in.steps[static_cast<size_t>(i)] = makeSample(i + 1, {.input = slow ? 0.03 : 0.0, .compute = 0.07});
    }
    const Verdict v = classify(in);
    ASSERT_EQ(v.windows.size(), 20u);
    for (size_t i = 0; i < v.windows.size(); ++i) {
        EXPECT_EQ(v.windows[i].last_step - v.windows[i].first_step + 1, 10);
        EXPECT_EQ(v.windows[i].kind, i % 2 == 0 ? BoundKind::Input : BoundKind::Balanced);
    }
    expectCoversRun(v, in);
}

TEST(VerdictTimeline, WindowsWithTheSameCallMerge) {
    const ProfileInput in = uniformRun(1000, {.input = 0.03, .compute = 0.07});
    const Verdict v = classify(in);
    ASSERT_EQ(v.windows.size(), 1u);
    EXPECT_EQ(v.windows[0].first_step, 1);
    EXPECT_EQ(v.windows[0].last_step, 1000);
}

TEST(VerdictTimeline, UnevenRunsSplitIntoNearlyEqualWindows) {
    // 205 steps in 20 windows: five of 11 steps, then fifteen of 10. Input in every other window,
    // so none merge.
    std::vector<int64_t> ends;
    for (int64_t w = 0, end = 0; w < 20; ++w) ends.push_back(end += w < 5 ? 11 : 10);
    ProfileInput in = uniformRun(0, {});
    for (int64_t step = 1; step <= 205; ++step) {
        const auto window = std::lower_bound(ends.begin(), ends.end(), step) - ends.begin();
        in.steps.push_back(makeSample(step, {.input = window % 2 == 0 ? 0.05 : 0.0, .compute = 0.07}));
    }
    const Verdict v = classify(in);
    ASSERT_EQ(v.windows.size(), 20u);
    for (size_t w = 0; w < 20; ++w) EXPECT_EQ(v.windows[w].last_step, ends[w]) << "window " << w;
    expectCoversRun(v, in);
}

// A smoke check that a stored run of 10,000 steps with 20 op rows classifies; its time is a
// benchmark's business (testutil::largeRun builds the input).
TEST(VerdictTimeline, TenThousandStepsClassify) {
    const ProfileInput in = testutil::largeRun(10000, 20);
    const Verdict v = classify(in);
    EXPECT_EQ(v.verdict.first_step, 21);
    EXPECT_EQ(v.verdict.last_step, 10000);
    EXPECT_LE(v.windows.size(), 20u);
    expectCoversRun(v, in);
    EXPECT_FALSE(v.actions.empty());
}

}  // namespace
}  // namespace trainbench::profiler
