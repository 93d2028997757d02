// What a user sees when an experiment file is wrong: every issue, with where and why.
#include <gtest/gtest.h>

#include "app/experiment/experiment.h"
#include "tests/app/experimenttesting.h"

namespace trainbench::app {
namespace {

using testing::errorOf;
using testing::issuesOf;
using testing::withModel;

TEST(ExperimentValidation, MalformedJsonNamesLineAndColumn) {
    const std::string text = "{\n  \"model\": {\"preset\": \"mlp\"},\n  \"train\": {\"epochs\": 3,}\n}\n";
    const auto issues = issuesOf(text);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "test.json:3:25");
    EXPECT_NE(issues[0].message.find("syntax error"), std::string::npos) << issues[0].message;
    EXPECT_EQ(errorOf(text).rfind("test.json:3:25: syntax error", 0), 0u) << errorOf(text);
}

TEST(ExperimentValidation, MalformedJsonColumnCountsCharactersNotBytes) {
    // "é" is two bytes in UTF-8 but one column in an editor.
    const std::string text = "{\"description\": \"caf\xC3\xA9\" \"model\": {}}";
    const auto issues = issuesOf(text);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "test.json:1:24");
}

TEST(ExperimentValidation, MissingCommaPointsAtTheStartOfTheNextKey) {
    const auto issues = issuesOf("{\n  \"model\": {\"preset\": \"mlp\"}\n  \"train\": {}\n}\n");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "test.json:3:3");
    EXPECT_EQ(issues[0].message, "syntax error while parsing object - unexpected string literal; expected '}'");
}

TEST(ExperimentValidation, TruncatedFilePointsAtTheEnd) {
    const auto issues = issuesOf("{\n  \"model\": {\"preset\": \"mlp\"}\n");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "test.json:3:1");
    EXPECT_NE(issues[0].message.find("end of input"), std::string::npos) << issues[0].message;
}

TEST(ExperimentValidation, DuplicateKeysAreRejected) {
    const auto issues = issuesOf(R"({"train": {"epochs": 2, "epochs": 3}, "model": {"preset": "mlp"}})");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "train.epochs");
    EXPECT_NE(issues[0].message.find("duplicate key"), std::string::npos);
}

TEST(ExperimentValidation, DuplicateKeyInsideALayerNamesTheLayer) {
    const auto issues = issuesOf(
        R"({"model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 10, "units": 20}]}})");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "model.layers[1].units");
}

TEST(ExperimentValidation, TopLevelMustBeAnObject) {
    const auto issues = issuesOf("[1, 2]");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_NE(issues[0].message.find("expected a JSON object"), std::string::npos);
}

TEST(ExperimentValidation, WrongTypeNamesKeyPathExpectedTypeAndValue) {
    EXPECT_EQ(errorOf(withModel(R"("train": {"batch_size": "128"},)")),
              "test.json: train.batch_size: expected a positive integer, got string \"128\"");
    EXPECT_EQ(errorOf(withModel(R"("data": {"shuffle": 1},)")), "test.json: data.shuffle: expected true or false, got number 1");
    EXPECT_EQ(errorOf(withModel(R"("optimizer": [],)")), "test.json: optimizer: expected an object, got an empty array");
    EXPECT_EQ(errorOf(withModel(R"("train": {"epochs": 1.5},)")),
              "test.json: train.epochs: expected a non-negative integer, got number 1.5");
}

TEST(ExperimentValidation, OutOfRangeNamesRangeAndValue) {
    EXPECT_EQ(errorOf(withModel(R"("optimizer": {"learning_rate": -0.1},)")),
              "test.json: optimizer.learning_rate: must be > 0 and <= 10, got -0.1");
    EXPECT_EQ(errorOf(withModel(R"("train": {"batch_size": 0},)")),
              "test.json: train.batch_size: must be >= 1 and <= 65536, got 0");
    EXPECT_EQ(errorOf(withModel(R"("optimizer": {"beta2": 1},)")),
              "test.json: optimizer.beta2: must be >= 0 and < 1, got 1");
    EXPECT_EQ(errorOf(withModel(R"("train": {"threads": 2000},)")),
              "test.json: train.threads: must be >= 0 and <= 1024, got 2000");
}

TEST(ExperimentValidation, IntegersWrittenAsNumbersAreAccepted) {
    const Experiment e = parseExperiment(withModel(R"("train": {"max_steps": 1e4, "batch_size": 64.0},)"), "t.json");
    EXPECT_EQ(e.train.max_steps, 10000);
    EXPECT_EQ(e.train.batch_size, 64);
    EXPECT_TRUE(e.resolved["train"]["max_steps"].is_number_integer());
}

TEST(ExperimentValidation, UnknownKeySuggestsTheClosestKey) {
    EXPECT_EQ(errorOf(withModel(R"("train": {"bach_size": 64},)")),
              "test.json: train.bach_size: unknown key; did you mean 'batch_size'?");
    EXPECT_EQ(errorOf(withModel(R"("optimzer": {},)")), "test.json: optimzer: unknown key; did you mean 'optimizer'?");
}

TEST(ExperimentValidation, UnknownKeyInTheWrongSectionPointsToTheRightOne) {
    EXPECT_EQ(errorOf(withModel(R"("train": {"learning_rate": 0.1},)")),
              "test.json: train.learning_rate: unknown key; did you mean 'optimizer.learning_rate'? "
              "('learning_rate' belongs in optimizer)");
}

TEST(ExperimentValidation, UnknownKeyWithNothingCloseListsTheKnownKeys) {
    const auto issues = issuesOf(withModel(R"("train": {"xyzzy": 1},)"));
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "train.xyzzy");
    EXPECT_NE(issues[0].message.find("known keys: 'batch_size', 'epochs', 'max_steps'"), std::string::npos)
        << issues[0].message;
}

TEST(ExperimentValidation, UnknownLayerKeySuggestsFromThatLayerType) {
    const auto issues = issuesOf(R"({"model": {"layers": [
        {"type": "conv2d", "filters": 8, "kernal": 5},
        {"type": "flatten"},
        {"type": "dense", "units": 10, "filters": 3}]}})");
    ASSERT_EQ(issues.size(), 2u);
    EXPECT_EQ(issues[0].where, "model.layers[0].kernal");
    EXPECT_EQ(issues[0].message, "unknown key for a conv2d layer; did you mean 'kernel'?");
    EXPECT_EQ(issues[1].where, "model.layers[2].filters");
    EXPECT_EQ(issues[1].message, "unknown key for a dense layer; known keys: 'type', 'units', 'bias'");
}

TEST(ExperimentValidation, BadEnumValuesListTheAllowedValuesAndSuggest) {
    EXPECT_EQ(errorOf(withModel(R"("optimizer": {"type": "adamw"},)")),
              "test.json: optimizer.type: unknown value 'adamw'; must be one of 'adam', 'sgd'; did you mean 'adam'?");
    EXPECT_EQ(errorOf(withModel(R"("data": {"dataset": "fashion_mnist"},)")),
              "test.json: data.dataset: unknown value 'fashion_mnist'; must be one of 'fashion-mnist', 'idx', "
              "'tfrecord', 'csv', 'images', 'example_files', 'shape'; did you mean 'fashion-mnist'?");
    EXPECT_EQ(errorOf(R"({"model": {"preset": "resnet"}})"),
              "test.json: model.preset: unknown value 'resnet'; must be one of 'logreg', 'mlp', 'cnn', 'resnet_small', "
              "'resnet50'; did you mean 'resnet_small'?");
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "dens", "units": 10}]}})"),
              "test.json: model.layers[0].type: unknown layer type 'dens'; must be one of 'dense', 'conv2d', "
              "'maxpool2d', 'relu', 'flatten', 'dropout', 'batch_norm', 'global_avg_pool', 'bottleneck'; did you "
              "mean 'dense'?");
}

TEST(ExperimentValidation, PresetAndLayersTogetherAreRejected) {
    EXPECT_EQ(errorOf(R"({"model": {"preset": "mlp", "layers": [{"type": "flatten"}]}})"),
              "test.json: model: give only one of 'preset', 'layers', 'onnx', not several");
}

TEST(ExperimentValidation, ModelIsRequired) {
    EXPECT_EQ(errorOf("{}"), "test.json: model: missing; give a model section with one of 'preset', 'layers', 'onnx'");
    EXPECT_EQ(errorOf(R"({"model": {}})"), "test.json: model: give one of 'preset', 'layers', 'onnx'");
}

TEST(ExperimentValidation, LayersMustBeANonEmptyListOfTypedObjects) {
    EXPECT_NE(errorOf(R"({"model": {"layers": []}})").find("model.layers: must not be empty"), std::string::npos);
    EXPECT_EQ(errorOf(R"({"model": {"layers": ["relu"]}})"),
              "test.json: model.layers[0]: expected a layer object such as {\"type\": \"relu\"}, got string \"relu\"");
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"units": 10}]}})"),
              "test.json: model.layers[0].type: missing; every layer needs a type, one of 'dense', 'conv2d', "
              "'maxpool2d', 'relu', 'flatten', 'dropout', 'batch_norm', 'global_avg_pool', 'bottleneck'");
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "flatten"}, {"type": "dense"}]}})"),
              "test.json: model.layers[1].units: missing; expected a positive integer");
    EXPECT_EQ(errorOf(R"({"model": {"layers": [{"type": "dropout", "rate": 1.0}]}})"),
              "test.json: model.layers[0].rate: must be >= 0 and < 1, got 1.0");
}

TEST(ExperimentValidation, NoEpochsAndNoStepsIsRejected) {
    EXPECT_EQ(errorOf(withModel(R"("train": {"epochs": 0, "max_steps": 0},)")),
              "test.json: train: at least one of 'epochs' and 'max_steps' must be > 0 (both are 0, so the run "
              "would never end)");
    EXPECT_NO_THROW(parseExperiment(withModel(R"("train": {"epochs": 0, "max_steps": 500},)"), "t.json"));
}

TEST(ExperimentValidation, CrossKeyRulesOfOptimizerAndTarget) {
    EXPECT_EQ(errorOf(withModel(R"("optimizer": {"type": "sgd", "nesterov": true},)")),
              "test.json: optimizer.nesterov: Nesterov momentum needs optimizer.momentum > 0 (it is 0)");
    EXPECT_EQ(errorOf(withModel(R"("train": {"stop_at_target": true},)")),
              "test.json: train.stop_at_target: needs train.target_accuracy > 0 (it is 0, so there is no target "
              "to stop at)");
}

TEST(ExperimentValidation, EmptyStringsAreRejectedWhereTheyMakeNoSense) {
    EXPECT_EQ(errorOf(withModel(R"("data": {"path": ""},)")), "test.json: data.path: must not be empty");
}

TEST(ExperimentValidation, SeveralIssuesAreReportedTogether) {
    const std::string text = R"({
      "seed": -1,
      "data": {"datset": "fashion-mnist"},
      "model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 0}]},
      "optimizer": {"type": "sgd", "learning_rate": "fast"},
      "train": {"batch_size": 128, "epochs": 0, "max_steps": 0}
    })";
    const auto issues = issuesOf(text);
    ASSERT_EQ(issues.size(), 5u) << errorOf(text);
    EXPECT_EQ(issues[0].where, "seed");
    EXPECT_EQ(issues[1].where, "data.datset");
    EXPECT_EQ(issues[2].where, "model.layers[1].units");
    EXPECT_EQ(issues[3].where, "optimizer.learning_rate");
    EXPECT_EQ(issues[4].where, "train");
    const std::string what = errorOf(text);
    EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 4) << what;
}

// strategy.stage_boundaries is text from the user: anything but comma-separated layer indices is
// refused naming the key, before a number is parsed or a list is allocated.
TEST(ExperimentValidation, StageBoundariesAreLayerIndicesOnly) {
    const auto pipeline = [](const std::string& boundaries) {
        return withModel(R"("strategy": {"type": "pipeline", "stages": 3, "stage_boundaries": )" + boundaries + "},");
    };
    EXPECT_EQ(parseExperiment(pipeline(R"(" 2 , 4 ")"), "test.json").strategy.stage_boundaries, (std::vector<int>{2, 4}));
    EXPECT_NE(errorOf(pipeline(R"("")")).find("strategy.stage_boundaries: must not be empty"), std::string::npos);
    for (const std::string bad : {R"("2,")", R"(",2")", R"("2,,4")", R"("-1,2")", R"("2.5,4")",
                                  R"("99999999999999999999,1")", R"("2;rm -rf /")", R"("2\t4")", R"("0x2,4")"}) {
        const std::string what = errorOf(pipeline(bad));
        EXPECT_NE(what.find("strategy.stage_boundaries: is "), std::string::npos) << bad << ": " << what;
        EXPECT_NE(what.find("not comma-separated layer indices"), std::string::npos) << bad << ": " << what;
    }
}

// strategy.collective picks how a multi_worker job's processes all-reduce; no other strategy has
// processes exchanging gradients, and a name outside the two is refused with the choices.
TEST(ExperimentValidation, CollectiveIsForMultiWorkerJobs) {
    const Experiment x = parseExperiment(
        withModel(R"("strategy": {"type": "multi_worker", "replicas": 2, "collective": "mpi"},)"), "test.json");
    EXPECT_EQ(x.strategy.collective, engine::CollectiveBackend::Mpi);
    EXPECT_EQ(parseExperiment(withModel(), "test.json").strategy.collective, engine::CollectiveBackend::Gloo);
    const std::string mirrored = errorOf(withModel(R"("strategy": {"type": "mirrored", "replicas": 2, "collective": "mpi"},)"));
    EXPECT_NE(mirrored.find("strategy.collective: is \"mpi\" but strategy.type is \"mirrored\""), std::string::npos)
        << mirrored;
    const std::string unknown = errorOf(withModel(R"("strategy": {"type": "multi_worker", "collective": "nccl"},)"));
    EXPECT_NE(unknown.find("strategy.collective"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("gloo"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace trainbench::app
