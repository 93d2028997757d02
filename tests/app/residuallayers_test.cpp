// Experiment files with residual networks: the batch_norm, global_avg_pool and bottleneck layer types
// and max pooling's padding reach the engine with their defaults; bad values and layer orders that no
// input could fit are reported with their key paths before anything runs; the resnet presets and the
// shipped fmnist-resnet.json are valid.
#include <gtest/gtest.h>

#include "app/experiment/experiment.h"
#include "tests/app/experimenttesting.h"

namespace trainbench::app {
namespace {

using engine::LayerKind;
using engine::LayerSpec;
using testing::errorOf;

TEST(ResidualLayers, TypesAndDefaultsReachTheEngine) {
    const Experiment e = parseExperiment(R"({"model": {"layers": [
        {"type": "conv2d", "filters": 16, "padding": 1, "bias": false}, {"type": "batch_norm"}, {"type": "relu"},
        {"type": "maxpool2d", "size": 3, "stride": 2, "padding": 1},
        {"type": "bottleneck", "filters": 8}, {"type": "bottleneck", "filters": 16, "stride": 2, "momentum": 0.9,
        "epsilon": 1e-5}, {"type": "global_avg_pool"}, {"type": "dense", "units": 10}]}})", "t.json");
    const std::vector<LayerSpec>& l = e.model.layers;
    ASSERT_EQ(l.size(), 8u);
    EXPECT_EQ(l[1].kind, LayerKind::BatchNorm);
    EXPECT_FLOAT_EQ(l[1].momentum, 0.99f) << "Keras' default";
    EXPECT_FLOAT_EQ(l[1].epsilon, 0.001f) << "Keras' default";
    EXPECT_EQ(l[3].padding, 1);
    EXPECT_EQ(l[3].stride, 2);
    EXPECT_EQ(l[4].kind, LayerKind::Bottleneck);
    EXPECT_EQ(l[4].filters, 8);
    EXPECT_EQ(l[4].stride, 1);
    EXPECT_EQ(l[5].stride, 2);
    EXPECT_FLOAT_EQ(l[5].momentum, 0.9f);
    EXPECT_FLOAT_EQ(l[5].epsilon, 1e-5f);
    EXPECT_EQ(l[6].kind, LayerKind::GlobalAvgPool);
    const auto& resolved = e.resolved["model"]["layers"];
    EXPECT_EQ(resolved[1], nlohmann::json({{"type", "batch_norm"}, {"momentum", 0.99}, {"epsilon", 0.001}}));
    EXPECT_EQ(resolved[4], nlohmann::json({{"type", "bottleneck"}, {"filters", 8}, {"stride", 1}, {"momentum", 0.99},
                                           {"epsilon", 0.001}}));
}

TEST(ResidualLayers, BadValuesNameTheirKeyPath) {
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "batch_norm", "momentum": 1.5}]}})"),
              "test.json: model.layers[0].momentum: must be >= 0 and <= 1, got 1.5");
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "batch_norm", "epsilon": 0}]}})"),
              "test.json: model.layers[0].epsilon: must be > 0 and <= 1, got 0");
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "conv2d", "filters": 4}, {"type": "bottleneck"}]}})"),
              "test.json: model.layers[1].filters: missing; expected a positive integer");
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "bottleneck", "filters": 4, "strides": 2}]}})"),
              "test.json: model.layers[0].strides: unknown key for a bottleneck layer; did you mean 'stride'?");
}

TEST(ResidualLayers, ImageLayersAfterAFlatOneAreRefusedNamingBothLayers) {
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "flatten"}, {"type": "bottleneck", "filters": 4},
                          {"type": "dense", "units": 10}]}})"),
              "test.json: model.layers[1]: a bottleneck layer needs an image [channels, height, width], but layer 0 "
              "(flatten) has made the data flat; put image layers before flatten, dense and global_avg_pool");
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "conv2d", "filters": 4}, {"type": "global_avg_pool"},
                          {"type": "conv2d", "filters": 4}, {"type": "dense", "units": 10}]}})"),
              "test.json: model.layers[2]: a conv2d layer needs an image [channels, height, width], but layer 1 "
              "(global_avg_pool) has made the data flat; put image layers before flatten, dense and global_avg_pool");
    // batch_norm works on both: after a dense layer it normalises each feature.
    EXPECT_NO_THROW(parseExperiment(R"({"model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 32},
                          {"type": "batch_norm"}, {"type": "relu"}, {"type": "dense", "units": 10}]}})", "t.json"));
}

TEST(ResidualLayers, PoolingPaddingIsAtMostHalfTheWindow) {
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "maxpool2d", "size": 3, "padding": 2}, {"type": "flatten"},
                          {"type": "dense", "units": 10}]}})"),
              "test.json: model.layers[0].padding: must be at most half the window (size 3), got 2");
}

TEST(ResidualLayers, PresetsExpandToResidualNetworksWithAClassSizedHead) {
    for (const char* name : {"resnet_small", "resnet50"}) {
        const Experiment e = parseExperiment(std::string(R"({"model": {"preset": ")") + name + R"("}})", "t.json");
        ASSERT_FALSE(e.model.layers.empty()) << name;
        EXPECT_EQ(e.model.layers.back().kind, LayerKind::Dense) << name;
        EXPECT_EQ(e.model.layers.back().units, LayerSpec::kUnitsPerClass) << name;
        EXPECT_EQ(e.model.layers[e.model.layers.size() - 2].kind, LayerKind::GlobalAvgPool) << name;
    }
    const Experiment r50 = parseExperiment(R"({"model": {"preset": "resnet50"}})", "t.json");
    int blocks = 0;
    for (const LayerSpec& l : r50.model.layers) blocks += l.kind == LayerKind::Bottleneck;
    EXPECT_EQ(blocks, 3 + 4 + 6 + 3);
}

TEST(ResidualLayers, ShippedResnetExperimentIsValid) {
    const Experiment e = loadExperimentFile(std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-resnet.json");
    EXPECT_EQ(e.model.preset, "resnet_small");
    EXPECT_EQ(e.train.epochs, 1);
    const Experiment again = parseExperiment(e.resolved.dump(), "elsewhere/other.json");
    EXPECT_EQ(again.resolved, e.resolved);
}

}  // namespace
}  // namespace trainbench::app
