// Sweeps: one experiment file, one run per combination of its sweep's values; every point is checked
// by the CLI's own parser before anything runs.
#include <algorithm>

#include <gtest/gtest.h>

#include "app/experiment/experimentschema.h"
#include "app/experiment/sweep.h"

namespace trainbench::app {
namespace {

// The issues expandSweep throws for text ("test.json"); a test failure if it accepts it.
std::vector<ExperimentIssue> sweepIssues(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
        expandSweep(text, "test.json", overrides);
    } catch (const ExperimentError& e) {
        return e.issues();
    }
    ADD_FAILURE() << "expected an ExperimentError for:\n" << text;
    return {};
}

const ExperimentIssue* issueAt(const std::vector<ExperimentIssue>& issues, const std::string& where) {
    const auto it = std::find_if(issues.begin(), issues.end(), [&](const ExperimentIssue& i) { return i.where == where; });
    return it == issues.end() ? nullptr : &*it;
}

std::vector<std::string> names(const std::vector<SweepPoint>& points) {
    std::vector<std::string> out;
    for (const SweepPoint& p : points) out.push_back(p.name);
    return out;
}

TEST(Sweep, ExpandsEveryCombinationInFileOrderLastKeyFastest) {
    // train before strategy in the file, although nlohmann would sort strategy first.
    const auto points = expandSweep(R"({"name": "fmnist-mlp", "model": {"preset": "mlp"},
        "strategy": {"type": "mirrored"},
        "sweep": {"train.batch_size": [64, 128], "strategy.replicas": [1, 2, 4]}})", "test.json");
    EXPECT_EQ(names(points), (std::vector<std::string>{
                                 "fmnist-mlp-batch_size64-replicas1", "fmnist-mlp-batch_size64-replicas2",
                                 "fmnist-mlp-batch_size64-replicas4", "fmnist-mlp-batch_size128-replicas1",
                                 "fmnist-mlp-batch_size128-replicas2", "fmnist-mlp-batch_size128-replicas4"}));
    // Each point is a validated experiment with its values set, its name, and no sweep left in it.
    const SweepPoint& p = points[4];
    EXPECT_EQ(p.experiment.name, "fmnist-mlp-batch_size128-replicas2");
    EXPECT_EQ(p.experiment.train.batch_size, 128);
    EXPECT_EQ(p.experiment.strategy.replicas, 2);
    EXPECT_EQ(p.experiment.strategy.type, engine::StrategyKind::Mirrored);
    EXPECT_EQ(p.experiment.resolved["strategy"]["replicas"], 2);
    EXPECT_FALSE(p.experiment.resolved.contains("sweep"));
    ASSERT_EQ(p.settings.size(), 2u);
    EXPECT_EQ(p.settings[0].key, "train.batch_size");
    EXPECT_EQ(p.settings[0].value, 128);
    // The point re-made from its overrides (how a job's worker processes load it) is the same run.
    const std::string text = R"({"name": "fmnist-mlp", "model": {"preset": "mlp"}, "strategy": {"type": "mirrored"},
        "sweep": {"train.batch_size": [64, 128], "strategy.replicas": [1, 2, 4]}})";
    EXPECT_EQ(parseExperiment(text, "test.json", p.overrides).resolved, p.experiment.resolved);
}

TEST(Sweep, NamesTextValuesWithAnUnderscoreAndSharedKeysWithTheirPath) {
    const auto points = expandSweep(R"({"model": {"preset": "mlp"},
        "sweep": {"optimizer.type": ["sgd"], "strategy.type": ["single"], "data.shuffle": [false],
                  "optimizer.learning_rate": [0.01]}})", "dir/my-exp.json");
    ASSERT_EQ(points.size(), 1u);
    // No "name" in the file: the file's stem, as for a run without a sweep.
    EXPECT_EQ(points[0].name, "my-exp-optimizer_type_sgd-strategy_type_single-shuffle_false-learning_rate0.01");
    EXPECT_EQ(points[0].experiment.optimizer.kind, engine::OptimizerKind::SGD);
    EXPECT_FALSE(points[0].experiment.data.shuffle);
}

TEST(Sweep, AnExperimentWithoutASweepIsOnePoint) {
    const auto points = expandSweep(R"({"name": "plain", "model": {"preset": "mlp"}, "train": {"epochs": 2}})", "test.json");
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0].name, "plain");
    EXPECT_TRUE(points[0].settings.empty());
    EXPECT_TRUE(points[0].overrides.empty());
    EXPECT_EQ(points[0].experiment.train.epochs, 2);
}

TEST(Sweep, OverridesApplyToEveryPointAndThePointsValuesWin) {
    const auto points = expandSweep(R"({"model": {"preset": "mlp"}, "sweep": {"train.batch_size": [16, 32]}})",
                                    "test.json", {"train.epochs=3", "train.batch_size=999"});
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].experiment.train.epochs, 3);
    EXPECT_EQ(points[0].experiment.train.batch_size, 16);
    EXPECT_EQ(points[1].experiment.train.batch_size, 32);
}

TEST(Sweep, ASweepCanBeGivenWithSet) {
    const auto points = expandSweep(R"({"name": "x", "model": {"preset": "mlp"}})", "test.json",
                                    {R"(sweep={"train.epochs": [1, 2]})"});
    EXPECT_EQ(names(points), (std::vector<std::string>{"x-epochs1", "x-epochs2"}));
}

TEST(Sweep, ParseExperimentReadsTheFileWithoutItsSweep) {
    const Experiment x = parseExperiment(R"({"model": {"preset": "mlp"}, "sweep": {"train.batch_size": [16, 32]}})", "t.json");
    EXPECT_EQ(x.train.batch_size, 128);
    EXPECT_FALSE(x.resolved.contains("sweep"));
}

TEST(Sweep, AnInvalidValueIsNamedWithItsKeyPathAndPlace) {
    const auto issues = sweepIssues(R"({"model": {"preset": "mlp"},
        "sweep": {"train.batch_size": [64, 0], "optimizer.type": ["adam", "adamw"], "data.shuffle": ["no"],
                  "strategy.replicas": [], "train.epochs": 3, "seed": [1, 1]}})");
    ASSERT_EQ(issues.size(), 6u);
    const ExperimentIssue* i = issueAt(issues, "sweep.train.batch_size[1]");
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->message, "must be >= 1 and <= 65536, got 0");
    i = issueAt(issues, "sweep.optimizer.type[1]");
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->message, "unknown value 'adamw'; must be one of 'adam', 'sgd'; did you mean 'adam'?");
    i = issueAt(issues, "sweep.data.shuffle[0]");
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->message, "expected true or false, got string \"no\"");
    i = issueAt(issues, "sweep.strategy.replicas");
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->message, "expected a non-empty array of values, e.g. [1, 2, 4], got an empty array");
    ASSERT_NE(issueAt(issues, "sweep.train.epochs"), nullptr);
    i = issueAt(issues, "sweep.seed[1]");
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->message, "repeats the value 1; each value is one run, give it once");
}

TEST(Sweep, AnUnknownKeyPathGetsTheSchemasSuggestion) {
    const auto issues = sweepIssues(R"({"model": {"preset": "mlp"},
        "sweep": {"strategy.replica": [1], "replicas": [2], "train.learning_rate": [0.1], "train": [1],
                  "name": ["a"], "model.layers": [[{"type": "relu"}]]}})");
    ASSERT_EQ(issues.size(), 6u);
    EXPECT_EQ(issueAt(issues, "sweep.strategy.replica")->message, "unknown key; did you mean 'strategy.replicas'?");
    EXPECT_EQ(issueAt(issues, "sweep.replicas")->message,
              "unknown key; did you mean 'strategy.replicas'? ('replicas' belongs in strategy)");
    EXPECT_EQ(issueAt(issues, "sweep.train.learning_rate")->message,
              "unknown key; did you mean 'optimizer.learning_rate'? ('learning_rate' belongs in optimizer)");
    EXPECT_EQ(issueAt(issues, "sweep.train")->message, "'train' is a section; sweep one of its keys, e.g. 'train.batch_size'");
    EXPECT_NE(issueAt(issues, "sweep.name")->message.find("cannot be swept"), std::string::npos);
    EXPECT_NE(issueAt(issues, "sweep.model.layers")->message.find("cannot be swept"), std::string::npos);
    // A misspelt "sweep" itself is an unknown top-level key like any other.
    const auto top = sweepIssues(R"({"model": {"preset": "mlp"}, "swep": {"seed": [1]}})");
    ASSERT_EQ(top.size(), 1u);
    EXPECT_EQ(top[0].message, "unknown key; did you mean 'sweep'?");
}

TEST(Sweep, APointThatBreaksARuleAcrossKeysIsNamedBeforeAnythingRuns) {
    // replicas 2 is a valid value, but not with the file's strategy 'single'.
    const auto issues = sweepIssues(R"({"name": "e", "model": {"preset": "mlp"}, "sweep": {"strategy.replicas": [1, 2]}})");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "strategy.replicas");
    EXPECT_NE(issues[0].message.find("strategy.type is 'single'"), std::string::npos) << issues[0].message;
    EXPECT_NE(issues[0].message.find("(in sweep point 'e-replicas2': strategy.replicas=2)"), std::string::npos)
        << issues[0].message;
}

TEST(Sweep, PathValuesAreRelativeToTheFile) {
    const auto points = expandSweep(R"({"model": {"preset": "mlp"}, "sweep": {"data.path": ["a/fmnist", "/abs/other"]}})",
                                    "/experiments/dir/x.json");
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].experiment.data.path, "/experiments/dir/a/fmnist");
    EXPECT_EQ(points[0].name, "x-path_fmnist");
    EXPECT_EQ(points[1].experiment.data.path, "/abs/other");
}

TEST(Sweep, TooManyPointsAreRefused) {
    const auto issues = sweepIssues(R"({"model": {"preset": "mlp"}, "sweep": {
        "seed": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "train.epochs": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        "train.batch_size": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}})");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].where, "sweep");
}

TEST(Sweep, SweepableKeysAreTheSchemasLeavesButName) {
    const auto keys = sweepableKeys(experimentSchema());
    EXPECT_EQ(keys.front(), "description");
    for (const char* k : {"seed", "strategy.replicas", "data.pipeline.prefetch", "model.preset", "device.memory_mb"})
        EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
    for (const char* k : {"name", "model.layers", "sweep", "data", "data.pipeline"})
        EXPECT_EQ(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
}

}  // namespace
}  // namespace trainbench::app
