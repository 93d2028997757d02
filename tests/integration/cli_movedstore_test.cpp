// A run store moved (or copied) together with its folder: the runs recorded in it still find the
// files they keep there. A source run leaves its checkpoint beside the store (checkpoints/run-1.ckpt)
// and came from an experiment file in the same folder; after the folder moves, warm starts from
// that checkpoint (by run id and by file), `show` and `report` all name the folder where it is now.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/profiler/storetestutil.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;
namespace fs = std::filesystem;

namespace {

const char* kExperiment = R"({"name": "%s", "seed": 1, "model": {"preset": "logreg"},
    "data": {"train_limit": 1024, "test_limit": 200},
    "train": {"batch_size": 128, %s "threads": 1}})";

std::string writeExperiment(const fs::path& file, const std::string& name, const std::string& train) {
    std::string text = kExperiment;
    text.replace(text.find("%s"), 2, name);
    text.replace(text.find("%s"), 2, train);
    std::ofstream(file) << text;
    return file.string();
}

TEST(CliMovedStore, TheRunsOfAMovedFolderFindTheirCheckpointAndFilesWhereTheFolderIsNow) {
    TempDir tmp;
    const fs::path before = tmp.path / "before", after = tmp.path / "after";
    fs::create_directories(before);
    const std::string source = writeExperiment(before / "source.json", "source", R"("epochs": 1, "checkpoint_at_end": true,)");
    auto r = runCli({"run", source, "--db", (before / "runs.db").string(), "-q"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    ASSERT_TRUE(fs::exists(before / "checkpoints" / "run-1.ckpt"));
    {
        profiler::testutil::RawDb raw((before / "runs.db").string());
        EXPECT_EQ(raw.text("SELECT experiment_file FROM runs"), "./source.json");
        EXPECT_EQ(raw.text("SELECT value FROM run_attributes WHERE key = 'checkpoint.path'"), "./checkpoints/run-1.ckpt");
    }

    fs::rename(before, after);
    const std::string db = (after / "runs.db").string();
    const std::string checkpoint = (after / "checkpoints" / "run-1.ckpt").string();
    const std::string target = writeExperiment(tmp.path / "target.json", "by-run", R"("epochs": 0, "max_steps": 2,)");
    r = runCli({"run", target, "--db", db, "--set", "train.warm_start.run=1"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("warm start from run 1's checkpoint " + checkpoint), std::string::npos) << r.err;

    // A checkpoint file given by path is known as run 1's when it is the one run 1 recorded.
    r = runCli({"run", target, "--db", db, "--set", "name=by-file", "--set", "train.warm_start.checkpoint=" + checkpoint},
               tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    {
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const auto byFile = store.findRun("by-file");
        ASSERT_TRUE(byFile);
        EXPECT_EQ(byFile->warm_start_run, 1);
        const auto byRun = store.findRun("by-run");
        ASSERT_TRUE(byRun);
        std::string recorded;
        for (const auto& [key, value] : store.attributes(byRun->id))
            if (key == "warm_start.checkpoint") recorded = value;
        EXPECT_EQ(recorded, checkpoint);
    }

    r = runCli({"show", "1", "--db", db}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("experiment      " + (after / "source.json").string()), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("checkpoint.path"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(checkpoint), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(before.string()), std::string::npos) << r.out;

    const fs::path html = tmp.path / "report.html";
    r = runCli({"report", "1", "--db", db, "--html", html.string()}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string page = trainbench::testing::readAll(html);
    EXPECT_NE(page.find((after / "source.json").string()), std::string::npos);
    EXPECT_NE(page.find(checkpoint), std::string::npos);
    EXPECT_EQ(page.find(before.string()), std::string::npos);
}

}  // namespace
