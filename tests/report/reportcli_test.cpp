// `trainbench-cli report` as a user runs it: both files from a store, the exit codes of bad input,
// and one run trained for real and reported end to end.
#include <gtest/gtest.h>

#include "profiler/format/numberformat.h"
#include "profiler/report/reportformat.h"
#include "profiler/report/svgcanvas.h"
#include "tests/integration/clirunner.h"
#include "tests/report/reportfixture.h"

namespace trainbench::profiler {
namespace {

using testing::runCli;
using testutil::mirroredFixture;
using testutil::pdfPages;
using testutil::readFile;
using testutil::recordFixtureRun;
using testutil::RunFixture;

using testutil::has;

class ReportCli : public ::testing::Test {
protected:
    testing::TempDir dir;
    std::string db = (dir.path / "runs.db").string();
    std::string file(const char* name) const { return (dir.path / name).string(); }
};

TEST_F(ReportCli, WritesHtmlAndPdfOfTwoRuns) {
    recordFixtureRun(db, RunFixture{});
    recordFixtureRun(db, mirroredFixture());
    const auto r = runCli({"report", "alpha", "2", "--html", file("r.html"), "--pdf", file("r.pdf"), "--db", db}, dir.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(has(r.out, "wrote " + file("r.html")));
    EXPECT_TRUE(has(r.out, "wrote " + file("r.pdf")));
    EXPECT_TRUE(r.err.empty()) << r.err;  // no Qt start-up chatter
    const std::string html = readFile(file("r.html"));
    EXPECT_TRUE(has(html, ">Run #1 alpha</h2>"));
    EXPECT_TRUE(has(html, ">Run #2 beta</h2>"));
    EXPECT_TRUE(has(html, "<h2 id=\"comparison\">"));
    const std::string pdf = readFile(file("r.pdf"));
    EXPECT_EQ(pdf.rfind("%PDF-", 0), 0u);
    EXPECT_GE(pdfPages(pdf), 3u);
}

TEST_F(ReportCli, BadInputExitsNonZeroAndSaysWhy) {
    recordFixtureRun(db, RunFixture{});
    auto r = runCli({"report", "alpha", "nope", "--html", file("r.html"), "--db", db}, dir.path);
    EXPECT_EQ(r.exitCode, 4);  // kExitNotFound
    EXPECT_TRUE(has(r.err, "'nope'")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(file("r.html")));

    r = runCli({"report", "alpha", "--db", db}, dir.path);
    EXPECT_EQ(r.exitCode, 2);  // kExitUsage: nowhere to write
    EXPECT_TRUE(has(r.err, "--html")) << r.err;

    const std::string bad = file("missing/r.pdf");
    r = runCli({"report", "alpha", "--pdf", bad, "--db", db}, dir.path);
    EXPECT_EQ(r.exitCode, 5);  // kExitIo
    EXPECT_TRUE(has(r.err, bad)) << r.err;

    r = runCli({"report", "1", "--html", file("r.html"), "--db", file("missing.db")}, dir.path);
    EXPECT_EQ(r.exitCode, 3);  // kExitStore
}

TEST_F(ReportCli, ARealRunReportedEndToEnd) {
    const std::string experiment = std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-logreg.json";
    auto run = runCli({"run", experiment, "--set", "train.max_steps=60", "--set", "train.eval_every_steps=20",
                       "--set", "name=<tiny>", "--db", db, "-q"},
                      dir.path);
    ASSERT_EQ(run.exitCode, 0) << run.err;
    const auto r = runCli({"report", "<tiny>", "--html", file("r.html"), "--pdf", file("r.pdf"), "--db", db}, dir.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    RunStore store = RunStore::open(db, OpenMode::ReadOnly);
    const RunRow row = *store.findRun("<tiny>");
    ASSERT_TRUE(row.final_accuracy);
    const std::string html = readFile(file("r.html"));
    EXPECT_TRUE(has(html, ">Run #1 &lt;tiny&gt;</h2>"));
    EXPECT_TRUE(has(html, "<td>" + fmtPercent(*row.final_accuracy) + "</td>"));
    EXPECT_TRUE(has(html, "<td>60</td>"));  // steps
    ASSERT_TRUE(store.verdict(row.id));
    EXPECT_TRUE(has(html, xmlEscape(store.verdict(row.id)->verdict.summary)));
    EXPECT_TRUE(has(html, "id=\"chart-run-1-breakdown\""));
    EXPECT_EQ(readFile(file("r.pdf")).rfind("%PDF-", 0), 0u);
}

}  // namespace
}  // namespace trainbench::profiler
