// What the PDF draws: the report laid out as a paged QTextDocument — every section present and laid
// out (none silently dropped), each chart one inline object, each run's section on a new page.
#include <gtest/gtest.h>

#include <QAbstractTextDocumentLayout>
#include <QTextBlock>

#include <cmath>

#include "profiler/report/guiscope.h"
#include "profiler/report/report.h"
#include "profiler/report/reportdocument.h"
#include "tests/report/reportfixture.h"

namespace trainbench::profiler {
namespace {

using testutil::mirroredFixture;
using testutil::recordFixtureRun;
using testutil::RunFixture;
using testutil::TempDir;

TEST(ReportDocument, EverySectionIsLaidOutWithItsChartsAndRunsStartPages) {
    TempDir dir;
    const std::string db = dir.file("runs.db");
    const RunId a = recordFixtureRun(db, RunFixture{});
    const RunId b = recordFixtureRun(db, mirroredFixture());
    RunStore store = RunStore::open(db);
    const ReportData data = collectReport(store, {a, b});

    GuiScope gui("the test");
    const QSizeF page(680, 1000);
    ReportDocument report(data, page);
    QTextDocument& doc = report.document();
    EXPECT_EQ(report.charts(), reportCharts(data).size());
    const QString text = doc.toPlainText();
    EXPECT_EQ(text.count(QChar::ObjectReplacementCharacter), static_cast<qsizetype>(report.charts()));
    EXPECT_FALSE(text.contains("@@trainbench-chart-"));
    for (const char* expected : {"Comparison", "Experiment differences", "Run #1 alpha", "Run #2 beta", "Verdict", "Timeline",
                                 "Prefetch batches on a background thread", "Top ops by time", "Memory",
                                 "Resolved experiment", "\"batch_size\": 128", "87.31 %", "86.14 %"})
        EXPECT_TRUE(text.contains(QString::fromUtf8(expected))) << expected;

    // Every block with text was laid out: a block left without a layout is drawn as nothing.
    for (QTextBlock block = doc.begin(); block.isValid(); block = block.next()) {
        if (block.text().isEmpty()) continue;
        EXPECT_GT(doc.documentLayout()->blockBoundingRect(block).height(), 0) << block.text().toStdString();
    }

    // Each run's section begins a page (2+ runs), and the charts fit a page.
    for (const char* heading : {"Run #1 alpha", "Run #2 beta"}) {
        const QTextBlock block = doc.find(QString::fromUtf8(heading)).block();
        const double top = doc.documentLayout()->blockBoundingRect(block).top();
        EXPECT_LT(std::fmod(top, page.height()), 30) << heading << " at " << top;
    }
    EXPECT_GE(report.pages(), 5);

    // No heading ends a page while what it introduces starts the next one.
    auto pageOf = [&](const QTextBlock& block) {
        return static_cast<int>(doc.documentLayout()->blockBoundingRect(block).top() / page.height());
    };
    for (QTextBlock block = doc.begin(); block.isValid(); block = block.next()) {
        if (block.blockFormat().headingLevel() == 0 || !block.next().isValid()) continue;
        const bool pageTop = std::fmod(doc.documentLayout()->blockBoundingRect(block).top(), page.height()) < 1.0;
        EXPECT_TRUE(pageTop || pageOf(block.next()) == pageOf(block)) << block.text().toStdString();
    }
}

}  // namespace
}  // namespace trainbench::profiler
