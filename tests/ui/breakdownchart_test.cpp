// BreakdownChart: stacked per-category means over windows of steps, zero categories left out,
// zoom re-windows, and the tooltip names the band with its seconds and share of the step. Each step
// phase (the categories RunHistory makes from kStepPhases) has a colour of its own.
#include "charttestutil.h"
#include "profiler/verdict/stepsample.h"
#include "ui/charts/breakdownchart.h"
#include "ui/charts/chartstyle.h"

#include <QSet>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

using namespace trainbench::ui;
using trainbench::ui::test::settle;
using trainbench::ui::test::showAt;
using trainbench::ui::test::widgetPos;

namespace {

// 2,000 steps: input 2 ms (12 ms in steps 1,001–1,500), forward 6 ms, backward 10 ms, no
// communication at all (one device), checkpoint nothing.
BreakdownDataPtr run() {
    auto d = std::make_shared<BreakdownData>();
    d->categories = {{"input", {}}, {"forward", {}}, {"backward", {}}, {"communication", {}}, {"checkpoint", {}}};
    for (int s = 1; s <= 2000; ++s) {
        d->steps.push_back(s);
        d->categories[0].seconds.push_back(s > 1000 && s <= 1500 ? 0.012 : 0.002);
        d->categories[1].seconds.push_back(0.006);
        d->categories[2].seconds.push_back(0.010);
        d->categories[3].seconds.push_back(0.0);
        d->categories[4].seconds.push_back(0.0);
    }
    return d;
}

}  // namespace

class BreakdownChartTest : public QObject {
    Q_OBJECT
private slots:
    void stacksWindowMeansOfTheCategoriesThatOccur() {
        BreakdownChart chart;
        chart.setData(run());
        showAt(chart, {900, 400});
        QCOMPARE(chart.shownCategories(), (QStringList{"input", "forward", "backward"}));
        const auto& windows = chart.windows();
        QVERIFY(windows.size() >= 50 && windows.size() <= 900 / 6);
        // Bands stack: backward's top is the step total, in ms (the axis unit for an 18 ms step).
        QAreaSeries* backward = chart.area("backward");
        QVERIFY(backward);
        QCOMPARE(backward->upperSeries()->points().front().y(), 18.0);
        QCOMPARE(backward->lowerSeries()->points().front().y(), 8.0);
        QVERIFY(chart.chart()->axes(Qt::Vertical).first()->titleText().contains("ms"));
        // The slow-input stretch is 10 ms higher.
        double highest = 0;
        for (const QPointF& p : backward->upperSeries()->points()) highest = std::max(highest, p.y());
        QVERIFY(qFuzzyCompare(highest, 28.0));
    }

    void zoomRewindowsTheVisibleSteps() {
        BreakdownChart chart;
        chart.setData(run());
        showAt(chart, {900, 400});
        chart.setXRange(1001, 1040);
        settle(chart);
        const auto& windows = chart.windows();
        QCOMPARE(windows.size(), size_t(40));  // fewer steps than room: one window per step
        QCOMPARE(windows.front().firstStep, 1001.0);
        QVERIFY(qFuzzyCompare(windows.front().means[0], 0.012));
        chart.resetZoom();
        settle(chart);
        QCOMPARE(chart.windows().front().firstStep, 1.0);
    }

    void tooltipNamesTheBandWithSecondsAndPercent() {
        BreakdownChart chart;
        chart.setData(run());
        showAt(chart, {900, 400});
        QAreaSeries* forward = chart.area("forward");
        // Step ~300: input 0–2 ms, forward 2–8 ms, backward 8–18 ms.
        const QString tip = chart.tooltipAt(widgetPos(chart, {300, 5.0}, forward));
        QVERIFY2(tip.contains("forward") && tip.contains("6.00 ms") && tip.contains("33.3 %") && tip.contains("18.0 ms"),
                 qPrintable(tip));
        QVERIFY(chart.tooltipAt(widgetPos(chart, {1200, 1.0}, forward)).contains("input"));
        QVERIFY(chart.tooltipAt(widgetPos(chart, {300, 25.0}, forward)).isEmpty());  // above the stack
    }

    void csvHasEveryStepAndCategory() {
        BreakdownChart chart;
        chart.setData(run());
        const QStringList rows = chart.csv().split('\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 2001);
        QCOMPARE(rows[0], "step,input (s),forward (s),backward (s),communication (s),checkpoint (s)");
        QCOMPARE(rows[1001], "1001,0.012,0.006,0.01,0,0");
    }

    void everyStepPhaseHasAColourOfItsOwn() {
        for (bool dark : {false, true}) {
            QSet<QRgb> seen;
            for (const trainbench::profiler::StepPhase& p : trainbench::profiler::kStepPhases) {
                const QString name = QString::fromLatin1(p.name.data(), static_cast<qsizetype>(p.name.size()));
                // A name chartstyle does not know gets a palette colour that changes with the fallback.
                const QColor colour = chartstyle::categoryColor(name, 0, dark);
                QVERIFY2(colour == chartstyle::categoryColor(name, 1, dark), qPrintable(name + " has no colour"));
                QVERIFY2(!seen.contains(colour.rgb()), qPrintable(name + " shares its colour"));
                seen.insert(colour.rgb());
            }
        }
    }

    void liveSnapshotsKeepTheirAreas() {
        BreakdownChart chart;
        chart.setData(run());
        showAt(chart, {900, 400});
        QAreaSeries* before = chart.area("input");
        auto more = std::make_shared<BreakdownData>(*run());
        more->steps.push_back(2001);
        for (auto& c : more->categories) c.seconds.push_back(c.seconds.back());
        chart.setData(more);
        settle(chart);
        QCOMPARE(chart.area("input"), before);  // same categories: the areas are updated, not rebuilt
        QCOMPARE(chart.windows().back().lastStep, 2001.0);
    }
};

QTEST_MAIN(BreakdownChartTest)
#include "breakdownchart_test.moc"
