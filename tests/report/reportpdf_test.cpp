// The PDF and PNG writers, headless: Qt Gui is started on the offscreen platform for the call and
// removed again; the PDF has pages, grows with the runs in it, and errors name the file.
#include <gtest/gtest.h>

#include <QCoreApplication>

#include <cstdlib>

#include "profiler/report/report.h"
#include "tests/report/reportfixture.h"

namespace trainbench::profiler {
namespace {

using testutil::mirroredFixture;
using testutil::pdfPages;
using testutil::readFile;
using testutil::recordFixtureRun;
using testutil::RunFixture;
using testutil::TempDir;

class ReportPdf : public ::testing::Test {
protected:
    TempDir dir;
    std::string db = dir.file("runs.db");
};

TEST_F(ReportPdf, APdfOfOneRunAndABiggerOneOfTwo) {
    const RunId a = recordFixtureRun(db, RunFixture{});
    const RunId b = recordFixtureRun(db, mirroredFixture());
    RunStore store = RunStore::open(db);
    const std::string one = dir.file("one.pdf"), two = dir.file("two.pdf");
    writePdf(collectReport(store, {a}), one);
    writePdf(collectReport(store, {a, b}), two);
    const std::string pdf1 = readFile(one), pdf2 = readFile(two);
    EXPECT_EQ(pdf1.rfind("%PDF-", 0), 0u);
    EXPECT_EQ(pdf2.rfind("%PDF-", 0), 0u);
    EXPECT_NE(pdf1.find("%%EOF"), std::string::npos);
    // One run: the summary, 4 charts, verdict, ops, memory and config take more than a page.
    EXPECT_GE(pdfPages(pdf1), 2u);
    // Two runs: each run's section on new pages, plus the comparison.
    EXPECT_GT(pdfPages(pdf2), pdfPages(pdf1) + 1);
    EXPECT_GT(pdf2.size(), pdf1.size());
    // The library's own application is gone again, and the environment is as it was.
    EXPECT_EQ(QCoreApplication::instance(), nullptr);
}

TEST_F(ReportPdf, TheCallerPlatformChoiceIsRestored) {
    const RunId a = recordFixtureRun(db, RunFixture{});
    RunStore store = RunStore::open(db);
    setenv("QT_QPA_PLATFORM", "minimal", 1);
    writePdf(collectReport(store, {a}), dir.file("r.pdf"));
    EXPECT_STREQ(std::getenv("QT_QPA_PLATFORM"), "minimal");
    unsetenv("QT_QPA_PLATFORM");
    writePdf(collectReport(store, {a}), dir.file("r.pdf"));
    EXPECT_EQ(std::getenv("QT_QPA_PLATFORM"), nullptr);
}

TEST_F(ReportPdf, AnUnwritablePathIsAnErrorNamingIt) {
    const RunId a = recordFixtureRun(db, RunFixture{});
    RunStore store = RunStore::open(db);
    const std::string bad = dir.file("missing-folder/r.pdf");
    try {
        writePdf(collectReport(store, {a}), bad);
        FAIL() << "expected ReportError";
    } catch (const ReportError& e) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("PDF report not saved"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST_F(ReportPdf, AChartAsPng) {
    const RunId a = recordFixtureRun(db, RunFixture{});
    RunStore store = RunStore::open(db);
    const std::vector<Chart> charts = reportCharts(collectReport(store, {a}));
    ASSERT_FALSE(charts.empty());
    const std::string path = dir.file("chart.png");
    writeChartPng(charts.front(), path, 1200);
    const std::string png = readFile(path);
    ASSERT_GT(png.size(), 24u);
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    // IHDR: width and height, big-endian, at bytes 16 and 20.
    auto be32 = [&](size_t at) {
        return (static_cast<uint32_t>(static_cast<unsigned char>(png[at])) << 24) |
               (static_cast<uint32_t>(static_cast<unsigned char>(png[at + 1])) << 16) |
               (static_cast<uint32_t>(static_cast<unsigned char>(png[at + 2])) << 8) |
               static_cast<uint32_t>(static_cast<unsigned char>(png[at + 3]));
    };
    EXPECT_EQ(be32(16), 1200u);
    EXPECT_GT(be32(20), 300u);
    EXPECT_LT(be32(20), 1200u);
    EXPECT_THROW(writeChartPng(charts.front(), dir.file("x/chart.png")), ReportError);
    EXPECT_THROW(writeChartPng(charts.front(), path, 0), ReportError);
}

}  // namespace
}  // namespace trainbench::profiler
