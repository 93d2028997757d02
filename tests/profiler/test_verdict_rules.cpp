// The classifier's rules at and around their thresholds (profiler/verdict/rules.h): input,
// communication, memory capacity, the roofline, balanced, warm-up, overhead, time between steps.
#include <gtest/gtest.h>

#include "verdicttestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::findEvidence;
using testutil::opAt;
using testutil::roofs;
using testutil::runWithCommFraction;
using testutil::runWithInputFraction;
using testutil::uniformRun;

void expectVerdict(const Verdict& v, BoundKind kind, Severity severity) {
    EXPECT_EQ(boundKindName(v.verdict.kind), std::string(boundKindName(kind))) << v.verdict.summary;
    EXPECT_EQ(severityName(v.verdict.severity), std::string(severityName(severity))) << v.verdict.summary;
}

TEST(VerdictRules, InputAt25PercentIsHighlyInputBound) {
    const Verdict v = classify(runWithInputFraction(0.25));
    expectVerdict(v, BoundKind::Input, Severity::High);
    const Evidence* e = findEvidence(v.verdict, "input_fraction");
    ASSERT_NE(e, nullptr);
    EXPECT_NEAR(e->value, 25.0, 1e-9);
    EXPECT_EQ(e->unit, "%");
    EXPECT_NE(e->text.find("25.0 % of step time waiting for input"), std::string::npos) << e->text;
}

TEST(VerdictRules, InputAt6PercentIsModeratelyInputBound) {
    expectVerdict(classify(runWithInputFraction(0.06)), BoundKind::Input, Severity::Moderate);
}

TEST(VerdictRules, InputExactlyAtThresholdsCounts) {
    expectVerdict(classify(runWithInputFraction(0.05)), BoundKind::Input, Severity::Moderate);
    expectVerdict(classify(runWithInputFraction(0.20)), BoundKind::Input, Severity::High);
    // Steps of 51 ms at exactly 5 % (20 %) each: the 90 steps after warm-up sum to
    // 4.9999999999999885 % (19.99999999999995 %) in doubles, which still counts.
    expectVerdict(classify(runWithInputFraction(0.05, 100, 0.051)), BoundKind::Input, Severity::Moderate);
    expectVerdict(classify(runWithInputFraction(0.20, 100, 0.051)), BoundKind::Input, Severity::High);
}

TEST(VerdictRules, InputJustBelowThresholdsDoesNot) {
    expectVerdict(classify(runWithInputFraction(0.0499)), BoundKind::Balanced, Severity::Low);
    expectVerdict(classify(runWithInputFraction(0.1999)), BoundKind::Input, Severity::Moderate);
}

TEST(VerdictRules, CommunicationAt20PercentCountsAnd19_9DoesNot) {
    const Verdict at = classify(runWithCommFraction(0.20));
    expectVerdict(at, BoundKind::Communication, Severity::Moderate);
    EXPECT_NE(findEvidence(at.verdict, "collective_fraction"), nullptr);
    expectVerdict(classify(runWithCommFraction(0.199)), BoundKind::Balanced, Severity::Low);
    expectVerdict(classify(runWithCommFraction(0.40)), BoundKind::Communication, Severity::High);
}

TEST(VerdictRules, InputAndCommunicationBothHighTheLargerWins) {
    ProfileInput in = uniformRun(100, {.input = 0.025, .compute = 0.045, .exposed_comm = 0.030});
    Verdict v = classify(in);
    expectVerdict(v, BoundKind::Communication, Severity::Moderate);
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.front().kind, BoundKind::Input);
    EXPECT_EQ(v.findings.front().severity, Severity::High);

    in = uniformRun(100, {.input = 0.030, .compute = 0.045, .exposed_comm = 0.025});
    v = classify(in);
    expectVerdict(v, BoundKind::Input, Severity::High);
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.front().kind, BoundKind::Communication);
}

TEST(VerdictRules, CommunicationAboveModerateInputWins) {
    const Verdict v = classify(uniformRun(100, {.input = 0.01, .compute = 0.065, .exposed_comm = 0.025}));
    expectVerdict(v, BoundKind::Communication, Severity::Moderate);
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.front().kind, BoundKind::Input);
    EXPECT_EQ(v.findings.front().severity, Severity::Moderate);
}

MemoryFootprint footprint(double modelFraction, double rssFraction, const std::string& source = "host RAM") {
    MemoryFootprint m;
    m.device_bytes = 1e9;
    m.params_bytes = m.grads_bytes = 0.1 * modelFraction * 1e9;
    m.optimizer_bytes = 0.2 * modelFraction * 1e9;
    m.activation_bytes = 0.6 * modelFraction * 1e9;
    m.peak_rss_bytes = rssFraction * 1e9;
    m.device_source = source;
    return m;
}

TEST(VerdictRules, CapacityAt90PercentOfTheDeviceAnd89DoesNot) {
    ProfileInput in = runWithInputFraction(0.30);  // capacity comes first
    in.memory = footprint(0.90, 0.5);
    Verdict v = classify(in);
    expectVerdict(v, BoundKind::MemoryCapacity, Severity::Moderate);
    ASSERT_NE(findEvidence(v.verdict, "footprint_fraction"), nullptr);
    EXPECT_NEAR(findEvidence(v.verdict, "footprint_fraction")->value, 90.0, 1e-6);
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.front().kind, BoundKind::Input);

    in.memory = footprint(0.89, 0.5);
    expectVerdict(classify(in), BoundKind::Input, Severity::High);

    in.memory = footprint(1.05, 0.5);
    expectVerdict(classify(in), BoundKind::MemoryCapacity, Severity::High);
}

TEST(VerdictRules, PeakRssCountsAgainstHostRamOnly) {
    ProfileInput in = runWithInputFraction(0.0);
    in.memory = footprint(0.10, 0.92, "host RAM");
    expectVerdict(classify(in), BoundKind::MemoryCapacity, Severity::Moderate);
    // An emulated device's memory: the process's RSS holds the data set and runtime, not the device's.
    in.memory = footprint(0.10, 0.92, "device.memory_mb");
    expectVerdict(classify(in), BoundKind::Balanced, Severity::Low);
}

TEST(VerdictRules, SwappingByTheProcessesMajorFaultsIsHighCapacity) {
    ProfileInput in = runWithInputFraction(0.0, 100);  // 10 s of training
    in.memory = footprint(0.5, 0.6);
    in.memory->major_faults = 100;  // 10 per second
    Verdict v = classify(in);
    expectVerdict(v, BoundKind::MemoryCapacity, Severity::High);
    EXPECT_NE(findEvidence(v.verdict, "major_faults"), nullptr);

    in.memory->major_faults = 99;  // below the minimum count
    expectVerdict(classify(in), BoundKind::Balanced, Severity::Low);
}

TEST(VerdictRules, SystemWideSwapAloneIsEvidenceNotAVerdict) {
    ProfileInput in = runWithInputFraction(0.0, 100);
    in.memory = footprint(0.5, 0.6);
    in.memory->swapped_pages = 50000;
    in.memory->major_faults = 3;
    const Verdict v = classify(in);
    expectVerdict(v, BoundKind::Balanced, Severity::Low);
    const Evidence* e = findEvidence(v.verdict, "swapped_pages");
    ASSERT_NE(e, nullptr);
    EXPECT_NE(e->text.find("other processes"), std::string::npos) << e->text;
}

// Ridge 10 FLOP/B (roofs()).
TEST(VerdictRules, OpsLeftOfTheRidgeNearTheRoofAreMemoryBandwidthBound) {
    ProfileInput in = runWithInputFraction(0.01);
    in.roofs = roofs();
    in.ops = {opAt("eltwise", 8.0, 0.25, 7.0), opAt("matmul", 2.0, 40.0, 1.5)};  // 80 % left, 70 % of 10 GB/s
    Verdict v = classify(in);
    expectVerdict(v, BoundKind::MemoryBandwidth, Severity::High);
    EXPECT_NEAR(findEvidence(v.verdict, "ops_left_of_ridge")->value, 80.0, 1e-9);
    EXPECT_NEAR(findEvidence(v.verdict, "achieved_bandwidth")->value, 7.0, 1e-9);
    EXPECT_NE(findEvidence(v.verdict, "achieved_bandwidth")->text.find("compulsory"), std::string::npos);
    EXPECT_NE(findEvidence(v.verdict, "top_op_1"), nullptr);

    in.ops = {opAt("eltwise", 6.0, 0.25, 7.0), opAt("matmul", 4.0, 40.0, 1.5)};  // 60 % left
    expectVerdict(classify(in), BoundKind::MemoryBandwidth, Severity::Moderate);
    in.ops = {opAt("eltwise", 5.0, 0.25, 7.0), opAt("matmul", 5.0, 40.0, 1.5)};  // exactly 50 %
    expectVerdict(classify(in), BoundKind::MemoryBandwidth, Severity::Moderate);
    in.ops = {opAt("eltwise", 4.9, 0.25, 7.0), opAt("matmul", 5.1, 40.0, 1.5)};  // 49 % left; 60 % of peak
    expectVerdict(classify(in), BoundKind::Compute, Severity::High);
}

TEST(VerdictRules, AnOpAtTheRidgeCountsRightOfIt) {
    ProfileInput in = runWithInputFraction(0.01);
    in.roofs = roofs();
    in.ops = {opAt("at_ridge", 8.0, 10.0, 6.0), opAt("small", 2.0, 9.99, 6.0)};
    const Verdict v = classify(in);
    EXPECT_NEAR(findEvidence(v.verdict, "ops_left_of_ridge")->value, 20.0, 1e-9);
    EXPECT_EQ(v.verdict.kind, BoundKind::Compute);
}

TEST(VerdictRules, OpsRightOfTheRidgeAreComputeBoundSeverityByPeakReached) {
    ProfileInput in = runWithInputFraction(0.01);
    in.roofs = roofs();
    in.ops = {opAt("conv", 9.0, 20.0, 3.0), opAt("relu", 1.0, 0.25, 8.0)};  // 60 GFLOP/s: 60 % of peak
    Verdict v = classify(in);
    expectVerdict(v, BoundKind::Compute, Severity::High);
    EXPECT_NEAR(findEvidence(v.verdict, "achieved_compute_right")->value, 60.0, 1e-6);

    in.ops = {opAt("conv", 9.0, 20.0, 1.0), opAt("relu", 1.0, 0.25, 8.0)};  // 20 % of peak
    expectVerdict(classify(in), BoundKind::Compute, Severity::Moderate);
}

TEST(VerdictRules, OpsLeftOfTheRidgeFarFromTheRoofAreLatencyBoundCompute) {
    ProfileInput in = runWithInputFraction(0.01);
    in.roofs = roofs();
    in.ops = {opAt("tiny", 8.0, 0.25, 1.0), opAt("conv", 2.0, 20.0, 3.0)};  // left at 10 % of the roof
    const Verdict v = classify(in);
    expectVerdict(v, BoundKind::Compute, Severity::Moderate);
    EXPECT_NE(v.verdict.summary.find("latency"), std::string::npos) << v.verdict.summary;
}

TEST(VerdictRules, NoRoofsAndNothingElseIsBalanced) {
    ProfileInput in = runWithInputFraction(0.02);
    in.ops = {opAt("conv", 9.0, 20.0, 3.0)};  // ops but no roofs: no roofline
    const Verdict v = classify(in);
    expectVerdict(v, BoundKind::Balanced, Severity::Low);
    EXPECT_TRUE(v.findings.empty());
    EXPECT_NE(findEvidence(v.verdict, "input_fraction"), nullptr);
}

TEST(VerdictRules, WarmUpStepsAreSkippedForTheRunVerdict) {
    // 300 steps: the first 20 wait 2 s for input (95 % of the step), the rest 1 %.
    ProfileInput in = runWithInputFraction(0.01, 300);
    for (int i = 0; i < 20; ++i)
        in.steps[static_cast<size_t>(i)] = testutil::makeSample(i + 1, {.input = 2.0, .compute = 0.1});
    Verdict v = classify(in);
    expectVerdict(v, BoundKind::Balanced, Severity::Low);
    EXPECT_EQ(v.verdict.first_step, 21);
    EXPECT_EQ(v.verdict.last_step, 300);
    // One slow step more is not warm-up any longer: it alone takes the rest to 7.6 %.
    in.steps[20] = testutil::makeSample(21, {.input = 2.0, .compute = 0.1});
    v = classify(in);
    expectVerdict(v, BoundKind::Input, Severity::Moderate);
}

TEST(VerdictRules, ShortRunsKeepAllSteps) {
    ProfileInput in = runWithInputFraction(0.0, 9);
    in.steps[0] = testutil::makeSample(1, {.input = 0.9, .compute = 0.1});
    const Verdict v = classify(in);
    EXPECT_EQ(v.verdict.first_step, 1);
    expectVerdict(v, BoundKind::Input, Severity::High);
}

TEST(VerdictRules, TimeOutsideTheOpsIsAnOverheadFinding) {
    ProfileInput in = runWithInputFraction(0.0, 100);  // 10 s of compute phases
    in.roofs = roofs();
    in.ops = {opAt("conv", 6.0, 20.0, 3.0)};  // 6 s in ops: 40 % outside
    Verdict v = classify(in);
    ASSERT_EQ(v.findings.size(), 1u);
    EXPECT_EQ(v.findings[0].kind, BoundKind::Compute);
    EXPECT_EQ(v.findings[0].severity, Severity::Moderate);
    EXPECT_NEAR(findEvidence(v.findings[0], "outside_ops_fraction")->value, 40.0, 1e-9);
    EXPECT_NE(findEvidence(v.findings[0], "outside_ops_fraction")->text.find("framework overhead"), std::string::npos);

    // On an emulated device the time outside the ops is the device's own fixed costs, and it says so.
    in.experiment["device"]["type"] = "tpu-v3";
    const Verdict emulated = classify(in);
    ASSERT_EQ(emulated.findings.size(), 1u);
    const std::string why = findEvidence(emulated.findings[0], "outside_ops_fraction")->text;
    EXPECT_NE(why.find("the emulated device's fixed costs per step"), std::string::npos) << why;
    EXPECT_NE(why.find("overheads.per_step_us"), std::string::npos) << why;
    EXPECT_EQ(why.find("framework"), std::string::npos) << why;
    in.experiment["device"].erase("type");

    in.ops = {opAt("conv", 7.5, 20.0, 3.0)};  // 25 % outside: no finding
    EXPECT_TRUE(classify(in).findings.empty());
}

// When half the step or more is outside the ops, the roofline (which describes op time only) speaks
// for the lesser part: the overhead is the verdict, the roofline a further finding, and doubling
// the batch, which spreads the per-step cost over twice the samples, comes first.
TEST(VerdictRules, HalfTheStepOutsideTheOpsComesBeforeTheRoofline) {
    ProfileInput in = runWithInputFraction(0.0, 100);  // 10 s of compute phases
    in.roofs = roofs();
    in.ops = {opAt("adam_update", 4.0, 1.0, 8.0)};  // 4 s near the bandwidth roof: 60 % outside
    const Verdict v = classify(in);
    expectVerdict(v, BoundKind::Compute, Severity::High);
    EXPECT_EQ(v.verdict.summary, "Overhead: 60.0 % of step time outside the measured ops");
    EXPECT_EQ(v.verdict.first_step, 1) << "measured over the whole run, warm-up included";
    ASSERT_EQ(v.findings.size(), 1u);
    EXPECT_EQ(v.findings[0].kind, BoundKind::MemoryBandwidth);
    ASSERT_FALSE(v.actions.empty());
    EXPECT_EQ(v.actions[0].title, "Double the batch");
    ASSERT_TRUE(v.actions[0].expected_speedup);
    EXPECT_NEAR(*v.actions[0].expected_speedup, 2.0 / (2.0 - 0.6), 1e-9);

    in.ops = {opAt("adam_update", 5.1, 1.0, 8.0)};  // 49 % outside: the roofline stays the verdict
    const Verdict under = classify(in);
    expectVerdict(under, BoundKind::MemoryBandwidth, Severity::High);
    ASSERT_EQ(under.findings.size(), 1u);
    EXPECT_EQ(under.findings[0].severity, Severity::Moderate);
    EXPECT_EQ(under.findings[0].summary.rfind("Overhead: ", 0), 0u) << under.findings[0].summary;
}

TEST(VerdictRules, EvaluationAbove20PercentOfWallTimeIsEvidenceAndAnAction) {
    ProfileInput in = uniformRun(100, {.compute = 0.1, .eval = 0.03});  // 0.03 / 0.13 = 23 %
    in.experiment["train"]["eval_every_steps"] = 1;
    const Verdict v = classify(in);
    expectVerdict(v, BoundKind::Balanced, Severity::Low);
    const Evidence* e = findEvidence(v.verdict, "eval_checkpoint_fraction");
    ASSERT_NE(e, nullptr);
    EXPECT_NEAR(e->value, 100.0 * 0.03 / 0.13, 1e-9);
    ASSERT_FALSE(v.actions.empty());
    EXPECT_EQ(v.actions[0].title, "Evaluate less often");
    EXPECT_EQ(v.actions[0].addresses, BoundKind::Balanced);

    in = uniformRun(100, {.compute = 0.1, .eval = 0.02});  // 17 %: nothing
    in.experiment["train"]["eval_every_steps"] = 1;
    const Verdict below = classify(in);
    EXPECT_EQ(findEvidence(below.verdict, "eval_checkpoint_fraction"), nullptr);
    EXPECT_TRUE(below.actions.empty());
}

TEST(VerdictRules, NoStepsIsBalanced) {
    const Verdict v = classify(ProfileInput{});
    expectVerdict(v, BoundKind::Balanced, Severity::Low);
    EXPECT_TRUE(v.windows.empty());
}


// Model-parallel runs: their blocked time is not a gradient exchange. A pipeline's is the stages
// waiting on one another, judged against the schedule's bubble (K-1)/(M+K-1); a tensor-parallel
// run's is the all-reduces of activations between its devices. Each names what it is and proposes
// its own remedy.
ProfileInput modelParallelRun(double blockedFraction, const nlohmann::json& strategy) {
    ProfileInput in = runWithCommFraction(blockedFraction);
    in.strategy = engine::parseStrategyKind(strategy["type"].get<std::string>()).value();
    in.replicas = 1;
    in.experiment["strategy"] = strategy;
    return in;
}

TEST(VerdictRules, APipelineWaitingAboutItsBubbleIsBubbleBoundAndAboveItImbalanced) {
    // K = 2, M = 4: the bubble is 1/5 = 20 %.
    const nlohmann::json pipe = {{"type", "pipeline"}, {"stages", 2}, {"micro_batches", 4}};
    const Verdict bubble = classify(modelParallelRun(0.22, pipe));
    expectVerdict(bubble, BoundKind::Communication, Severity::Moderate);
    EXPECT_EQ(bubble.verdict.summary.rfind("Pipeline-bubble-bound: 22.0 %", 0), 0u) << bubble.verdict.summary;
    ASSERT_NE(findEvidence(bubble.verdict, "ideal_bubble_fraction"), nullptr);
    EXPECT_NEAR(findEvidence(bubble.verdict, "ideal_bubble_fraction")->value, 20.0, 1e-9);
    ASSERT_FALSE(bubble.actions.empty());
    EXPECT_EQ(bubble.actions.front().title, "Double the micro-batches");
    ASSERT_EQ(bubble.actions.front().changes.size(), 1u);
    EXPECT_EQ(bubble.actions.front().changes.front().key, "strategy.micro_batches");
    EXPECT_EQ(bubble.actions.front().changes.front().to, 8);

    const Verdict imbalanced = classify(modelParallelRun(0.31, pipe));
    EXPECT_EQ(imbalanced.verdict.summary.rfind("Stage-imbalanced: 31.0 %", 0), 0u) << imbalanced.verdict.summary;
}

TEST(VerdictRules, ATensorParallelRunBlockedOnItsAllReducesIsTensorCommunicationBound) {
    const nlohmann::json tensor = {{"type", "tensor"}, {"tensor", 4}};
    const Verdict v = classify(modelParallelRun(0.45, tensor));
    expectVerdict(v, BoundKind::Communication, Severity::High);
    EXPECT_EQ(v.verdict.summary.rfind("Tensor-communication-bound: 45.0 % of step time", 0), 0u) << v.verdict.summary;
    EXPECT_NE(v.verdict.summary.find("between the 4 tensor-parallel devices"), std::string::npos) << v.verdict.summary;
    EXPECT_EQ(v.verdict.summary.find("gradient exchange"), std::string::npos) << v.verdict.summary;
    ASSERT_GE(v.actions.size(), 2u);
    EXPECT_EQ(v.actions[0].title, "Train data-parallel instead");
    bool toMirrored = false, toFour = false;
    for (const Change& c : v.actions[0].changes) {
        toMirrored |= c.key == "strategy.type" && c.to == "mirrored";
        toFour |= c.key == "strategy.replicas" && c.to == 4;
    }
    EXPECT_TRUE(toMirrored && toFour) << "4 mirrored replicas instead of 4 tensor-parallel devices";
    EXPECT_EQ(v.actions[1].title, "Split across half the devices");
    ASSERT_EQ(v.actions[1].changes.size(), 1u);
    EXPECT_EQ(v.actions[1].changes.front().to, 2);
    // Below 20 % it is no finding at all.
    expectVerdict(classify(modelParallelRun(0.19, tensor)), BoundKind::Balanced, Severity::Low);
}

}  // namespace
}  // namespace trainbench::profiler
