// trainbench-cli predict and apply as a user runs them: a prediction from slow storage is called
// input-bound, and applying its first action runs a new prediction with the action's pipeline
// change on the same data, model and batch (not a training run).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

namespace {

using trainbench::testing::runCli;
using trainbench::testing::TempDir;
namespace profiler = trainbench::profiler;

TEST(CliPredict, AnInputBoundPredictionsActionBecomesANewPrediction) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const auto train = runCli({"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json", "--db", db, "-q",
                               "--set", "train.max_steps=30", "--set", "train.checkpoint_at_end=true",
                               "--set", "train.eval_every_steps=0", "--set", "name=source"},
                              tmp.path);
    ASSERT_EQ(train.exitCode, 0) << train.err;
    const auto convert = runCli({"convert", (tmp.path / "tfr").string(), "--split", "test", "--shards", "8"}, tmp.path);
    ASSERT_EQ(convert.exitCode, 0) << convert.err;
    const std::string shards = (tmp.path / "tfr" / "test-*").string();
    // 2 MB/s per open file: one file at a time spends most of the run reading.
    const auto slow = runCli({"predict", "source", "-o", (tmp.path / "p.csv").string(), "--db", db, "--set",
                              "data.dataset=tfrecord", "--set", "data.test_files=" + shards, "--set",
                              "data.train_files=" + shards, "--set", "data.storage.stream_bandwidth_mb_s=2"},
                             tmp.path);
    ASSERT_EQ(slow.exitCode, 0) << slow.err << slow.out;
    EXPECT_NE(slow.out.find("verdict: input-bound"), std::string::npos) << slow.out;

    const auto apply = runCli({"apply", "predict-source", "--action", "1", "--run", "-q", "--db", db}, tmp.path);
    ASSERT_EQ(apply.exitCode, 0) << apply.err << apply.out;
    EXPECT_NE(apply.out.find("as a prediction: trainbench-cli predict '1' -o"), std::string::npos) << apply.out;
    EXPECT_TRUE(std::filesystem::exists(tmp.path / "p-action1.csv"));
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto runs = store.listRuns();  // newest first
    ASSERT_EQ(runs.size(), 3u);  // the training, the prediction, the action's prediction: no training run
    const nlohmann::json config = nlohmann::json::parse(runs.front().config_json);
    EXPECT_EQ(runs.front().name, "predict-source");
    EXPECT_EQ(config["data"]["pipeline"]["parallel_reads"], true);
    EXPECT_EQ(config["data"]["storage"]["stream_bandwidth_mb_s"], 2);
    EXPECT_EQ(config["data"]["dataset"], "tfrecord");
    EXPECT_EQ(config["train"]["batch_size"], 256);
}

}  // namespace
