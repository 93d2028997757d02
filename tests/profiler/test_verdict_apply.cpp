// applyChanges(): an action's changes written into a copy of the experiment; and the names the
// findings table stores.
#include <gtest/gtest.h>

#include <stdexcept>

#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {
namespace {

using json = nlohmann::json;

TEST(VerdictApplyChanges, CreatesNestedKeysAndLeavesTheRestAlone) {
    const json experiment = {{"model", {{"preset", "mlp"}}}, {"data", {{"dataset", "tfrecord"}}}};
    const json out = applyChanges(experiment, {{"data.pipeline.prefetch", nullptr, 2},
                                               {"data.pipeline.parallel_reads", nullptr, true},
                                               {"strategy.overlap", nullptr, true}});
    EXPECT_EQ(out["data"]["pipeline"]["prefetch"], 2);
    EXPECT_EQ(out["data"]["pipeline"]["parallel_reads"], true);
    EXPECT_EQ(out["data"]["dataset"], "tfrecord");
    EXPECT_EQ(out["strategy"]["overlap"], true);
    EXPECT_EQ(out["model"], experiment["model"]);
    EXPECT_FALSE(experiment["data"].contains("pipeline")) << "the input must not change";
}

TEST(VerdictApplyChanges, ReplacesExistingValues) {
    const json experiment = {{"train", {{"batch_size", 128}, {"epochs", 5}}}};
    const json out = applyChanges(experiment, {{"train.batch_size", 128, 64}});
    EXPECT_EQ(out["train"]["batch_size"], 64);
    EXPECT_EQ(out["train"]["epochs"], 5);
}

TEST(VerdictApplyChanges, RefusesAPathThroughANumber) {
    const json experiment = {{"train", {{"batch_size", 128}}}};
    try {
        applyChanges(experiment, {{"train.batch_size.per_replica", nullptr, 64}});
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("train.batch_size.per_replica"), std::string::npos) << message;
        EXPECT_NE(message.find("number"), std::string::npos) << message;
    }
    EXPECT_THROW(applyChanges(json::array(), {{"train.batch_size", nullptr, 64}}), std::invalid_argument);
    EXPECT_THROW(applyChanges(experiment, {{"train..batch_size", nullptr, 64}}), std::invalid_argument);
    EXPECT_THROW(applyChanges(experiment, {{"model.layers[0].units", nullptr, 64}}), std::invalid_argument);
}

TEST(VerdictApplyChanges, APresetReplacesLayersAsSetDoes) {
    const json experiment = {{"model", {{"layers", json::array({{{"type", "flatten"}}})}}}};
    const json out = applyChanges(experiment, {{"model.preset", nullptr, "mlp"}});
    EXPECT_EQ(out["model"], json({{"preset", "mlp"}}));
}

TEST(VerdictNames, RoundTripAndRejectUnknown) {
    for (BoundKind k : {BoundKind::Input, BoundKind::Compute, BoundKind::MemoryBandwidth, BoundKind::MemoryCapacity,
                        BoundKind::Communication, BoundKind::Balanced})
        EXPECT_EQ(boundKindFromName(boundKindName(k)), k);
    for (Severity s : {Severity::High, Severity::Moderate, Severity::Low})
        EXPECT_EQ(severityFromName(severityName(s)), s);
    EXPECT_EQ(std::string(boundKindName(BoundKind::MemoryBandwidth)), "memory_bandwidth");
    EXPECT_EQ(std::string(severityName(Severity::Moderate)), "moderate");
    EXPECT_FALSE(boundKindFromName("io").has_value());
    EXPECT_FALSE(severityFromName("HIGH").has_value());
}

}  // namespace
}  // namespace trainbench::profiler
