// Disk full for real, for what a run records: the run store, and the checkpoint with the store
// elsewhere, each on a tmpfs of its own that another file has nearly filled, so that SQLite meets
// ENOSPC (SQLITE_FULL) mid-run and the checkpoint writer ENOSPC. The run fails saying the disk is
// full and where, nothing committed before is lost, and once the filler is removed the next run
// works in the same place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/checkpoint/checkpoint.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/diskfull.h"

using namespace trainbench;
using namespace trainbench::testing;

namespace {

std::string bytesOf(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(CliDiskFull, StoreFillingUpMidRunFailsTheRunNamingTheFullDiskAndKeepsEveryCommittedRow) {
    SmallFileSystem disk(16 << 20);
    SKIP_WITHOUT_SMALL_FILE_SYSTEM(disk);
    TempDir tmp;
    const std::string db = (disk.path() / "runs.db").string();
    const CliResult first = runCli(quickRun(db), tmp.path);
    ASSERT_EQ(first.exitCode, 0) << first.err;

    // What is left fits the run's row and a few thousand steps, not the million it asks for.
    disk.fillLeaving(1 << 20);
    const CliResult full = runCli(
        quickRun(db, {"--set", "train.epochs=0", "--set", "train.max_steps=1000000", "--set", "train.eval_every_steps=50"}),
        tmp.path);
    EXPECT_EQ(full.exitCode, 3) << full.err;  // the run store cannot be written
    EXPECT_NE(full.err.find(db), std::string::npos) << full.err;
    EXPECT_NE(full.err.find("disk is full"), std::string::npos) << full.err;
    EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;

    EXPECT_EQ(integrityOf(db), "ok");
    {
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const auto runs = store.listRuns();
        ASSERT_EQ(runs.size(), 2u);
        const profiler::RunRow& failed = runs[0];
        EXPECT_EQ(failed.status, profiler::RunStatus::Failed) << failed.message.value_or("");
        ASSERT_TRUE(failed.message.has_value());
        EXPECT_NE(failed.message->find("disk is full"), std::string::npos) << *failed.message;
        const auto steps = store.steps(failed.id);
        EXPECT_GT(steps.size(), 0u) << "the batches committed before the disk filled up are lost";
        EXPECT_EQ(failed.steps, std::optional<int64_t>(static_cast<int64_t>(steps.size())));
        expectContiguousSteps(steps);
        for (const profiler::EvalSample& e : store.evals(failed.id)) EXPECT_LE(e.step, static_cast<int64_t>(steps.size()));
        EXPECT_EQ(runs[1].status, profiler::RunStatus::Completed);
        EXPECT_EQ(static_cast<int64_t>(store.steps(runs[1].id).size()), runs[1].steps.value_or(-1));
    }

    disk.removeFiller();
    const CliResult after = runCli(quickRun(db), tmp.path);
    EXPECT_EQ(after.exitCode, 0) << after.err;
    EXPECT_EQ(integrityOf(db), "ok");
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    EXPECT_EQ(store.listRuns().front().status, profiler::RunStatus::Completed);
}

TEST(CliDiskFull, CheckpointOnAFullDiskFailsTheRunNamingTheCheckpointAndKeepsTheOldOne) {
    SmallFileSystem disk(4 << 20);
    SKIP_WITHOUT_SMALL_FILE_SYSTEM(disk);
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string checkpoint = (disk.path() / "checkpoints" / "model.ckpt").string();
    const std::vector<std::string> checkpointing{"--set", "train.checkpoint_path=" + checkpoint, "--set",
                                                 "train.checkpoint_every_steps=3"};
    const CliResult first = runCli(quickRun(db, {"--set", "train.checkpoint_path=" + checkpoint, "--set",
                                                 "train.checkpoint_at_end=true"}),
                                   tmp.path);
    ASSERT_EQ(first.exitCode, 0) << first.err;
    const std::string old = bytesOf(checkpoint);
    ASSERT_FALSE(old.empty());

    // Room for half a checkpoint: the new one cannot be written beside the old.
    disk.fillLeaving(old.size() / 2);
    const CliResult full = runCli(quickRun(db, checkpointing), tmp.path);
    EXPECT_EQ(full.exitCode, 1) << full.err;  // the run failed
    EXPECT_NE(full.err.find(checkpoint + ": "), std::string::npos) << full.err;
    EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;

    EXPECT_EQ(bytesOf(checkpoint), old) << "the old checkpoint did not survive";
    EXPECT_NO_THROW(engine::Checkpoint::read(checkpoint));
    EXPECT_EQ(disk.files(), std::vector<std::string>{"checkpoints/model.ckpt"}) << "a temporary file was left";
    {
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const profiler::RunRow failed = store.listRuns().front();
        EXPECT_EQ(failed.status, profiler::RunStatus::Failed);
        EXPECT_NE(failed.message.value_or("").find(checkpoint), std::string::npos) << failed.message.value_or("");
        EXPECT_NE(failed.message.value_or("").find("No space left on device"), std::string::npos)
            << failed.message.value_or("");
        // The steps up to the checkpoint that failed are kept.
        const auto steps = store.steps(failed.id);
        EXPECT_EQ(steps.size(), 3u);
        EXPECT_EQ(failed.steps, std::optional<int64_t>(3));
        expectContiguousSteps(steps);
    }

    disk.removeFiller();
    const CliResult after = runCli(quickRun(db, checkpointing), tmp.path);
    EXPECT_EQ(after.exitCode, 0) << after.err;
    EXPECT_NE(bytesOf(checkpoint), old);
    EXPECT_NO_THROW(engine::Checkpoint::read(checkpoint));
}
