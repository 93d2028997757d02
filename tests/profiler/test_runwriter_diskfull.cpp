// A run store on a file system that really fills up (a small tmpfs: ENOSPC, SQLITE_FULL, not the
// EFBIG of a file size limit). Whatever the batch the disk fills up in, the run ends 'failed' with a
// message saying the disk is full and where, and every batch committed before stays.
#include <gtest/gtest.h>

#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/storeerror.h"
#include "storetestutil.h"
#include "tests/integration/smallfilesystem.h"

namespace trainbench::profiler {
namespace {

using testutil::makeStep;
using testutil::RawDb;
using trainbench::testing::SmallFileSystem;

struct Filled {
    int64_t lastFlushed = 0;     // the highest step a flush() confirmed
    std::string error;           // what the write that met the full disk said
    std::string finishError;     // what finish() said after it
};

// Records 10 steps, then `perBatch` per commit, until the store cannot take more.
Filled fillUp(const std::string& path, int64_t perBatch) {
    RunWriterOptions options;
    options.commitInterval = std::chrono::hours(1);  // commits only on flush()
    options.maxQueued = 1 << 20;
    RunWriter writer(path, RunSpec{}, options);
    Filled out;
    try {
        for (int64_t s = 1; s <= 10'000'000; ++s) {
            writer.step(makeStep(s));
            if (s == 10 || s % perBatch == 0) {  // something committed before the disk fills up
                writer.flush();
                out.lastFlushed = s;
            }
        }
    } catch (const StoreError& e) {
        out.error = e.what();
    }
    try {
        writer.finish(RunStatus::Completed, engine::RunSummary{});
    } catch (const StoreError& e) {
        out.finishError = e.what();
    }
    return out;
}

void expectFailedWithEverythingCommitted(const std::string& path, const Filled& filled) {
    EXPECT_NE(filled.error.find(path + ": could not"), std::string::npos) << filled.error;
    EXPECT_NE(filled.error.find("disk is full"), std::string::npos) << filled.error;
    EXPECT_NE(filled.error.find("No space left on device"), std::string::npos) << filled.error;
    EXPECT_FALSE(filled.finishError.empty());
    EXPECT_EQ(RawDb(path).text("PRAGMA integrity_check"), "ok");
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    const auto run = store.run(RunId{1});
    ASSERT_TRUE(run);
    // This process is alive: a run left 'running' here would stay so, its cause lost.
    EXPECT_EQ(runStatusName(run->status), "failed");
    EXPECT_NE(run->message.value_or("").find("disk is full"), std::string::npos) << run->message.value_or("");
    const auto steps = store.steps(RunId{1});
    ASSERT_GE(filled.lastFlushed, 10);
    ASSERT_GE(steps.size(), static_cast<size_t>(filled.lastFlushed));
    EXPECT_EQ(run->steps, std::optional<int64_t>(static_cast<int64_t>(steps.size())));
    for (size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
}

struct Batches {
    int64_t stepsPerCommit;
    const char* error;  // how the write that meets the full disk fails
    int freeSpaces;     // how many amounts of free space to start from, 700 bytes apart
};

class RunWriterDiskFull : public ::testing::TestWithParam<Batches> {};

// Where in a batch the disk fills up depends on the bytes left to the page; so each case starts
// from several amounts of free space. (Without the room kept for the final status, a third of the
// small-batch cases ended with the run still 'running'.)
TEST_P(RunWriterDiskFull, TheRunEndsFailedSayingTheDiskIsFull) {
    for (int k = 0; k < GetParam().freeSpaces; ++k) {
        SCOPED_TRACE("free space 1 MiB + " + std::to_string(k * 700) + " bytes");
        SmallFileSystem disk(8 << 20);
        if (!disk.mounted()) GTEST_SKIP() << "needs a small tmpfs of its own: " << disk.error();
        const std::string path = (disk.path() / "runs.db").string();
        RunStore::open(path);
        disk.fillLeaving((1 << 20) + k * 700);
        const Filled filled = fillUp(path, GetParam().stepsPerCommit);
        EXPECT_NE(filled.error.find(GetParam().error), std::string::npos) << filled.error;
        expectFailedWithEverythingCommitted(path, filled);
        if (::testing::Test::HasFailure()) return;

        // Space freed: the next run records as usual.
        disk.removeFiller();
        RunWriter next(path, RunSpec{});
        next.step(makeStep(1));
        next.finish(RunStatus::Completed, engine::RunSummary{});
        EXPECT_EQ(RunStore::open(path, OpenMode::ReadOnly).run(RunId{2})->status, RunStatus::Completed);
    }
}

// One and seven steps per commit (a few pages each) and a thousand (about 150 KiB): the room kept
// for the final status runs out between batches, and the writer stops there. Twenty thousand
// (3 MiB): one batch is larger than what is left, SQLite meets ENOSPC in its middle (SQLITE_FULL).
INSTANTIATE_TEST_SUITE_P(
    BatchSizes, RunWriterDiskFull,
    ::testing::Values(Batches{1, "could not go on recording run 1", 24}, Batches{7, "could not go on recording run 1", 24},
                      Batches{1000, "could not go on recording run 1", 4},
                      Batches{20000, "could not save run 1, steps 11-20000: database or disk is full (No space left on device", 2}),
    [](const ::testing::TestParamInfo<Batches>& p) { return "StepsPerCommit" + std::to_string(p.param.stepsPerCommit); });

}  // namespace
}  // namespace trainbench::profiler
