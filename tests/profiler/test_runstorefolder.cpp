// RunStoreFolder: which paths a run store records relative to its folder, and how a reader turns
// them back into paths, for single paths, descriptions and the stored experiment.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "profiler/store/runstorefolder.h"

namespace trainbench::profiler {
namespace {

const RunStoreFolder kFolder("/home/me/runs/runs.db");

TEST(RunStoreFolder, RecordsPathsInsideTheFolderRelativeToIt) {
    EXPECT_EQ(kFolder.path(), "/home/me/runs");
    EXPECT_EQ(kFolder.recorded("/home/me/runs/checkpoints/run-3.ckpt"), "./checkpoints/run-3.ckpt");
    EXPECT_EQ(kFolder.recorded("/home/me/runs/a/../trace.json"), "./trace.json");
    EXPECT_EQ(kFolder.recorded("/home/me/runs/data/train-*.tfrecord"), "./data/train-*.tfrecord");
    EXPECT_EQ(kFolder.recorded("/home/me/runs"), "./");
}

TEST(RunStoreFolder, KeepsOtherPathsAsGiven) {
    EXPECT_EQ(kFolder.recorded("/usr/share/datasets/fashion-mnist"), "/usr/share/datasets/fashion-mnist");
    EXPECT_EQ(kFolder.recorded("/home/me/runs2/x.ckpt"), "/home/me/runs2/x.ckpt") << "a sibling, not inside";
    EXPECT_EQ(kFolder.recorded("/home/me/x.ckpt"), "/home/me/x.ckpt");
    EXPECT_EQ(kFolder.recorded("experiments/a.json"), "experiments/a.json") << "not a path of this machine";
    EXPECT_EQ(kFolder.recorded(""), "");
}

TEST(RunStoreFolder, ResolvesRecordedPathsInTheFolderItIsOpenedIn) {
    const RunStoreFolder moved("/mnt/backup/runs.db");
    EXPECT_EQ(moved.resolved(kFolder.recorded("/home/me/runs/checkpoints/run-3.ckpt")), "/mnt/backup/checkpoints/run-3.ckpt");
    EXPECT_EQ(moved.resolved("./"), "/mnt/backup");
    // What earlier versions recorded reads as recorded.
    EXPECT_EQ(moved.resolved("/home/me/runs/checkpoints/run-3.ckpt"), "/home/me/runs/checkpoints/run-3.ckpt");
    EXPECT_EQ(moved.resolved("experiments/a.json"), "experiments/a.json");
    EXPECT_EQ(moved.resolved("../a.json"), "../a.json");
}

TEST(RunStoreFolder, ARelativeStorePathMeansTheCurrentDirectory) {
    const RunStoreFolder here("runs.db");
    EXPECT_EQ(here.path(), std::filesystem::current_path());
    EXPECT_EQ(here.recorded((std::filesystem::current_path() / "checkpoints" / "run-1.ckpt").string()),
              "./checkpoints/run-1.ckpt");
}

TEST(RunStoreFolder, DescriptionsNameFilesInsideTheFolderRelativeToIt) {
    const std::string text = "16 TFRecord file(s) from /home/me/runs/data/train-*.tfrecord; 10000 test examples "
                             "(/home/me/runs/data/test-*.tfrecord); x=/x/home/me/runs/data";
    const std::string recorded = kFolder.recordedText(text);
    EXPECT_EQ(recorded, "16 TFRecord file(s) from ./data/train-*.tfrecord; 10000 test examples "
                        "(./data/test-*.tfrecord); x=/x/home/me/runs/data");
    EXPECT_EQ(RunStoreFolder("/mnt/b/runs.db").resolvedText(recorded),
              "16 TFRecord file(s) from /mnt/b/data/train-*.tfrecord; 10000 test examples "
              "(/mnt/b/data/test-*.tfrecord); x=/x/home/me/runs/data");
    EXPECT_EQ(kFolder.resolvedText("from ../data and a./b"), "from ../data and a./b") << "no word begins with ./";
}

TEST(RunStoreFolder, TheExperimentsPathKeysAreRecordedRelativeInside) {
    const nlohmann::json config = {
        {"name", "./not-a-path"},
        {"data", {{"path", "/usr/share/datasets/fashion-mnist"}, {"train_files", "/home/me/runs/data/train-*"},
                  {"test_files", "/home/me/runs/data/test-*"}}},
        {"train", {{"checkpoint_path", "/home/me/runs/ck/a.ckpt"}, {"warm_start", {{"checkpoint", "/elsewhere/b.ckpt"}}}}},
        {"device", {{"catalog", "/home/me/runs/devices.json"}}}};
    const nlohmann::json recorded = nlohmann::json::parse(kFolder.recordedConfig(config.dump()));
    EXPECT_EQ(recorded["name"], "./not-a-path");
    EXPECT_EQ(recorded["data"]["path"], "/usr/share/datasets/fashion-mnist");
    EXPECT_EQ(recorded["data"]["train_files"], "./data/train-*");
    EXPECT_EQ(recorded["data"]["test_files"], "./data/test-*");
    EXPECT_EQ(recorded["train"]["checkpoint_path"], "./ck/a.ckpt");
    EXPECT_EQ(recorded["train"]["warm_start"]["checkpoint"], "/elsewhere/b.ckpt");
    EXPECT_EQ(recorded["device"]["catalog"], "./devices.json");

    const nlohmann::json resolved = nlohmann::json::parse(kFolder.resolvedConfig(recorded.dump()));
    EXPECT_EQ(resolved, config);
}

TEST(RunStoreFolder, ExperimentTextWithNothingToChangeIsKeptAsItIs) {
    const std::string spaced = R"({"data": {"path": "/usr/share/datasets/fashion-mnist"}, "seed": 1})";
    EXPECT_EQ(kFolder.recordedConfig(spaced), spaced);
    EXPECT_EQ(kFolder.resolvedConfig(spaced), spaced);
    EXPECT_EQ(kFolder.recordedConfig("not json"), "not json");
    EXPECT_EQ(kFolder.resolvedConfig(R"("./x")"), R"("./x")") << "not an experiment";
}

TEST(RunStoreFolder, OnlyPathAttributesAndDescriptionsChange) {
    EXPECT_EQ(kFolder.recordedAttribute("checkpoint.path", "/home/me/runs/checkpoints/run-1.ckpt"), "./checkpoints/run-1.ckpt");
    EXPECT_EQ(kFolder.recordedAttribute("warm_start.checkpoint", "/home/me/runs/a.ckpt"), "./a.ckpt");
    EXPECT_EQ(kFolder.recordedAttribute("input.source", "1 file from /home/me/runs/a"), "1 file from ./a");
    EXPECT_EQ(kFolder.recordedAttribute("memory.device_source", "/home/me/runs/a"), "/home/me/runs/a");
    EXPECT_EQ(kFolder.resolvedAttribute("checkpoint.path", "./checkpoints/run-1.ckpt"), "/home/me/runs/checkpoints/run-1.ckpt");
    EXPECT_EQ(kFolder.resolvedAttribute("input.source", "1 file from ./a"), "1 file from /home/me/runs/a");
    EXPECT_EQ(kFolder.resolvedAttribute("plan.total_steps", "./3"), "./3");
}

}  // namespace
}  // namespace trainbench::profiler
