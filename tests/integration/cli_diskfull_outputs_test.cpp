// Disk full for real, for the files trainbench writes on request: a Chrome trace (`run --trace`)
// and a report (`report --html`), each aimed at a tmpfs that another file has nearly filled. The
// command fails with an error naming the file and the full disk, and leaves no file there, whole
// or half; once the filler is removed the same command writes it.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/integration/clirunner.h"
#include "tests/integration/diskfull.h"

using namespace trainbench;
using namespace trainbench::testing;

TEST(CliDiskFull, TraceOntoAFullDiskFailsNamingItAndLeavesNoFile) {
    SmallFileSystem disk(4 << 20);
    SKIP_WITHOUT_SMALL_FILE_SYSTEM(disk);
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string trace = (disk.path() / "trace.json").string();
    const std::vector<std::string> traced = quickRun(db, {"--trace", trace, "--trace-steps", "1:10"});
    disk.fillLeaving(0);

    const CliResult full = runCli(traced, tmp.path);
    EXPECT_EQ(full.exitCode, 5) << full.err;  // an output file cannot be written
    EXPECT_NE(full.err.find(trace + ": "), std::string::npos) << full.err;
    EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
    EXPECT_TRUE(disk.files().empty()) << disk.files().front();
    // The training itself is recorded whole: the trace is an extra.
    {
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const profiler::RunRow run = store.listRuns().front();
        EXPECT_EQ(run.status, profiler::RunStatus::Completed);
        EXPECT_TRUE(run.verdict.has_value()) << "the run was not profiled to its end";
        EXPECT_NE(run.message.value_or("").find(trace), std::string::npos) << run.message.value_or("");
    }

    disk.removeFiller();
    const CliResult after = runCli(traced, tmp.path);
    EXPECT_EQ(after.exitCode, 0) << after.err;
    EXPECT_TRUE(nlohmann::json::accept(readAll(trace)));
}

TEST(CliDiskFull, ReportOntoAFullDiskFailsNamingItAndLeavesNoFile) {
    SmallFileSystem disk(4 << 20);
    SKIP_WITHOUT_SMALL_FILE_SYSTEM(disk);
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    ASSERT_EQ(runCli(quickRun(db), tmp.path).exitCode, 0);
    const std::string report = (disk.path() / "report.html").string();
    disk.fillLeaving(0);

    const CliResult full = runCli({"report", "1", "--db", db, "--html", report}, tmp.path);
    EXPECT_EQ(full.exitCode, 5) << full.err;
    EXPECT_NE(full.err.find(report + ": "), std::string::npos) << full.err;
    EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
    EXPECT_TRUE(disk.files().empty()) << disk.files().front();

    disk.removeFiller();
    const CliResult after = runCli({"report", "1", "--db", db, "--html", report}, tmp.path);
    EXPECT_EQ(after.exitCode, 0) << after.err;
    EXPECT_GT(std::filesystem::file_size(report), 0u);
}
