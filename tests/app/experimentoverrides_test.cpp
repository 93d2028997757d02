// `trainbench-cli run --set key.path=value`: overrides applied to the file before validation.
#include <filesystem>

#include <gtest/gtest.h>

#include "app/experiment/experiment.h"
#include "app/experiment/overrides.h"
#include "tests/app/experimenttesting.h"

namespace trainbench::app {
namespace {

using testing::errorOf;
using testing::issuesOf;
using testing::withModel;

const std::string kLayers = R"({"model": {"layers": [
    {"type": "conv2d", "filters": 8},
    {"type": "relu"},
    {"type": "maxpool2d"},
    {"type": "flatten"},
    {"type": "dense", "units": 10}]}})";

TEST(ExperimentOverrides, NumberBoolAndString) {
    const Experiment e = parseExperiment(withModel(), "t.json",
                                         {"train.batch_size=64", "data.shuffle=false", "optimizer.type=sgd",
                                          "optimizer.learning_rate=0.05", "description=\"quoted text\""});
    EXPECT_EQ(e.train.batch_size, 64);
    EXPECT_FALSE(e.data.shuffle);
    EXPECT_EQ(e.optimizer.kind, engine::OptimizerKind::SGD);
    EXPECT_FLOAT_EQ(e.optimizer.learning_rate, 0.05f);
    EXPECT_EQ(e.description, "quoted text");
    EXPECT_EQ(e.resolved["train"]["batch_size"], 64);
}

TEST(ExperimentOverrides, StringKeysTakeTheRawTextEvenIfItLooksLikeJson) {
    const Experiment e = parseExperiment(withModel(), "t.json", {"name=2024", "description=true"});
    EXPECT_EQ(e.name, "2024");
    EXPECT_EQ(e.description, "true");
}

TEST(ExperimentOverrides, LaterOverridesWinAndFileValuesAreReplaced) {
    const Experiment e = parseExperiment(withModel(R"("train": {"epochs": 7},)"), "t.json",
                                         {"train.epochs=2", "train.epochs=3"});
    EXPECT_EQ(e.train.epochs, 3);
}

TEST(ExperimentOverrides, NestedPathCreatesMissingSections) {
    const Experiment e = parseExperiment(withModel(), "t.json", {"train.target_accuracy=0.9", "seed=7"});
    EXPECT_DOUBLE_EQ(e.train.target_accuracy, 0.9);
    EXPECT_EQ(e.train.seed, 7u);
}

TEST(ExperimentOverrides, ArrayIndexSetsALayerKey) {
    const Experiment e = parseExperiment(kLayers, "t.json", {"model.layers[0].filters=16", "model.layers[4].units=12",
                                                             "model.layers[2].size=3"});
    ASSERT_EQ(e.model.layers.size(), 5u);
    EXPECT_EQ(e.model.layers[0].filters, 16);
    EXPECT_EQ(e.model.layers[4].units, 12);
    EXPECT_EQ(e.model.layers[2].kernel, 3);
    EXPECT_EQ(e.model.layers[2].stride, 3);  // stride follows size unless given
}

TEST(ExperimentOverrides, ArrayIndexCanReplaceOrAppendWholeLayers) {
    const Experiment e = parseExperiment(kLayers, "t.json",
                                         {R"(model.layers[1]={"type": "dropout", "rate": 0.25})",
                                          R"(model.layers[5]={"type": "relu"})"});
    ASSERT_EQ(e.model.layers.size(), 6u);
    EXPECT_EQ(e.model.layers[1].kind, engine::LayerKind::Dropout);
    EXPECT_FLOAT_EQ(e.model.layers[1].rate, 0.25f);
    EXPECT_EQ(e.model.layers[5].kind, engine::LayerKind::ReLU);
}

TEST(ExperimentOverrides, IndexOutOfRangeOrIntoAPresetIsRejected) {
    auto issues = issuesOf(kLayers, {"model.layers[9].units=3"});
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "model.layers[9]");
    EXPECT_NE(issues[0].message.find("index out of range; 'model.layers' has 5 entries"), std::string::npos);

    issues = issuesOf(withModel(), {"model.layers[1].units=3"});
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_NE(issues[0].message.find("no list at 'model.layers'"), std::string::npos) << issues[0].message;
}

TEST(ExperimentOverrides, UnknownOverrideKeyIsRejectedWithASuggestion) {
    EXPECT_EQ(errorOf(withModel(), {"train.bach_size=64"}),
              "test.json: train.bach_size: unknown key; did you mean 'batch_size'? (in --set train.bach_size=64)");
    EXPECT_EQ(errorOf(kLayers, {"model.layers[0].filter=4"}),
              "test.json: model.layers[0].filter: unknown key for a conv2d layer; did you mean 'filters'? "
              "(in --set model.layers[0].filter=4)");
}

TEST(ExperimentOverrides, MalformedOverrideNamesTheOverride) {
    EXPECT_EQ(errorOf(withModel(), {"train.batch_size"}),
              "test.json: --set train.batch_size: expected key.path=value, e.g. train.batch_size=64");
    EXPECT_EQ(errorOf(withModel(), {"=5"}), "test.json: --set =5: expected key.path=value, e.g. train.batch_size=64");
    const auto issues = issuesOf(withModel(), {"model.layers[x].units=3"});
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "--set model.layers[x].units=3");
    EXPECT_NE(issues[0].message.find("bad key path"), std::string::npos);
}

// Found by fuzz_experiment: raw text that is not UTF-8 became a JSON string that could not be printed,
// and the message about it ended the program (nlohmann's type_error 316, uncaught).
TEST(ExperimentOverrides, ARawValueThatIsNotUtf8IsRefused) {
    EXPECT_EQ(errorOf(withModel(), {"device.type=gpu\xff-v100"}),
              "test.json: --set device.type=gpu\xff-v100: the value is not UTF-8 text: invalid UTF-8 byte at index 3: 0xFF");
    EXPECT_EQ(errorOf(withModel(), {"name=caf\xc3"}),
              "test.json: --set name=caf\xc3: the value is not UTF-8 text: incomplete UTF-8 string; last byte: 0xC3");
    EXPECT_EQ(parseExperiment(withModel(), "t.json", {"name=caf\xc3\xa9"}).name, "caf\xc3\xa9");
}

TEST(ExperimentOverrides, OverrideValuesAreValidatedLikeFileValues) {
    EXPECT_EQ(errorOf(withModel(), {"train.batch_size=0"}), "test.json: train.batch_size: must be >= 1 and <= 65536, got 0");
    EXPECT_EQ(errorOf(withModel(), {"train.epochs=many"}),
              "test.json: train.epochs: expected a non-negative integer, got string \"many\"");
}

TEST(ExperimentOverrides, AllBadOverridesAndFileIssuesAreReportedTogether) {
    const auto issues = issuesOf(withModel(R"("train": {"batch_size": -1},)"), {"nope", "train.epocs=3"});
    ASSERT_EQ(issues.size(), 3u);
    EXPECT_EQ(issues[0].where, "--set nope");
    EXPECT_EQ(issues[1].where, "train.epocs");
    EXPECT_EQ(issues[2].where, "train.batch_size");
}

TEST(ExperimentOverrides, PresetAndLayersReplaceEachOther) {
    Experiment e = parseExperiment(kLayers, "t.json", {"model.preset=cnn"});
    EXPECT_EQ(e.model.preset, "cnn");
    EXPECT_FALSE(e.resolved["model"].contains("layers"));

    e = parseExperiment(withModel(), "t.json", {R"(model.layers=[{"type": "flatten"}, {"type": "dense", "units": 10}])"});
    EXPECT_EQ(e.model.preset, "");
    ASSERT_EQ(e.model.layers.size(), 2u);
    EXPECT_EQ(e.model.layers[1].units, 10);
}

TEST(ExperimentOverrides, RelativePathOverrideResolvesAgainstTheCurrentDirectory) {
    const Experiment e = parseExperiment(withModel(), "/somewhere/else/t.json", {"data.path=mydata/fm"});
    EXPECT_EQ(e.data.path, (std::filesystem::current_path() / "mydata/fm").lexically_normal().string());
}

TEST(ExperimentOverrides, KeyPathParsing) {
    std::string error;
    const auto steps = parseKeyPath("model.layers[12].units", &error);
    ASSERT_TRUE(steps.has_value()) << error;
    ASSERT_EQ(steps->size(), 4u);
    EXPECT_EQ((*steps)[0].key, "model");
    EXPECT_EQ((*steps)[1].key, "layers");
    EXPECT_EQ((*steps)[2].index, 12u);
    EXPECT_EQ((*steps)[3].key, "units");
    EXPECT_FALSE(parseKeyPath("train..epochs", &error));
    EXPECT_FALSE(parseKeyPath("train.", &error));
    EXPECT_FALSE(parseKeyPath("model.layers[", &error));
    EXPECT_FALSE(parseKeyPath("a b", &error));
}

}  // namespace
}  // namespace trainbench::app
