// ScalingChart: the ideal line and efficiencies match hand-computed values, labels show them at
// every point, time-to-target mode works without runs that missed the target.
#include "charttestutil.h"
#include "ui/charts/scalingchart.h"

#include <QtCharts/QLineSeries>

using namespace trainbench::ui;
using trainbench::ui::test::settle;
using trainbench::ui::test::showAt;
using trainbench::ui::test::widgetPos;

namespace {

std::vector<ScalingPoint> sweep() {
    return {{2, 1900.0, 200.0, "mirrored", "run 2"},  // not the first given: the base is the smallest count
            {1, 1000.0, 360.0, "mirrored", "run 1"},
            {4, 3400.0, 110.0, "mirrored", "run 4"},
            {4, 3600.0, std::nullopt, "mirrored", "run 4b"},  // a repeat that missed the target
            {8, 5600.0, 75.0, "mirrored", "run 8"},
            {2, 1500.0, std::nullopt, "multi_worker", "w2"},
            {4, 2400.0, std::nullopt, "multi_worker", "w4"}};
}

}  // namespace

class ScalingChartTest : public QObject {
    Q_OBJECT
private slots:
    void efficiencyAgainstHandComputedValues() {
        const auto rows = scalingRows(sweep());
        QCOMPARE(rows.size(), size_t(6));
        // mirrored: base 1 device at 1000 samples/s.
        QCOMPARE(rows[0].devices, 1);
        QCOMPARE(rows[0].efficiency, 1.0);
        QCOMPARE(rows[1].ideal, 2000.0);
        QCOMPARE(rows[1].efficiency, 0.95);
        QCOMPARE(rows[2].runs, 2);
        QCOMPARE(rows[2].throughput, 3500.0);  // mean of the repeats
        QCOMPARE(rows[2].efficiency, 3500.0 / 4000.0);
        QCOMPARE(rows[3].efficiency, 5600.0 / 8000.0);
        // Time to target: 360 device-seconds at the base; ideal time at 8 devices 45 s.
        QCOMPARE(*rows[2].timeToTarget, 110.0);  // only the run that reached it
        QCOMPARE(*rows[3].idealTime, 45.0);
        QCOMPARE(*rows[3].timeEfficiency, 45.0 / 75.0);
        QCOMPARE(*rows[1].timeEfficiency, 180.0 / 200.0);
        // multi_worker has its own base: 2 workers at 1500.
        QCOMPARE(rows[4].series, "multi_worker");
        QCOMPARE(rows[4].efficiency, 1.0);
        QCOMPARE(rows[5].ideal, 3000.0);
        QCOMPARE(rows[5].efficiency, 0.8);
        QVERIFY(!rows[5].timeToTarget && !rows[5].idealTime);
    }

    void labelsEveryPointWithItsEfficiency() {
        ScalingChart chart;
        chart.setPoints(sweep());
        showAt(chart, {700, 420});
        QCOMPARE(chart.pointLabels(), (QStringList{"100 %", "95.0 %", "87.5 %", "70.0 %", "100 %", "80.0 %"}));
        const auto ideal = chart.chart()->series();
        QVERIFY(std::any_of(ideal.begin(), ideal.end(), [](QAbstractSeries* s) { return s->name() == "mirrored: ideal"; }));
        // Hover on the 8-device point: throughput, ideal, efficiency, run.
        QAbstractSeries* measured = nullptr;
        for (QAbstractSeries* s : ideal)
            if (s->name() == "mirrored") measured = s;
        const QString tip = chart.tooltipAt(widgetPos(chart, {8, 5600}, measured));
        QVERIFY2(tip.contains("8 devices") && tip.contains("5600 samples/s") && tip.contains("ideal 8000") &&
                     tip.contains("70.0 %") && tip.contains("run 8"),
                 qPrintable(tip));
    }

    void timeToTargetModeShowsOnlyRunsThatReachedIt() {
        ScalingChart chart;
        chart.setPoints(sweep());
        chart.setMode(ScalingChart::Mode::TimeToTarget);
        showAt(chart, {700, 420});
        QCOMPARE(chart.pointLabels(), (QStringList{"100 %", "90.0 %", "81.8 %", "60.0 %"}));
        QVERIFY(chart.chart()->axes(Qt::Vertical).first()->titleText().contains("time to target (min)"));
        chart.setPoints({{1, 100.0, std::nullopt, "", ""}});
        settle(chart);
        QVERIFY(chart.pointLabels().isEmpty());
    }

    void csvRowPerCurveAndCount() {
        ScalingChart chart;
        chart.setPoints(sweep());
        const QStringList rows = chart.csv().split('\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 7);
        QCOMPARE(rows[0], "series,devices,throughput,ideal_throughput,efficiency,time_to_target_s,ideal_time_s,"
                          "time_efficiency,runs,labels");
        QCOMPARE(rows[4], "mirrored,8,5600,8000,0.7,75,45,0.6,1,run 8");
        QCOMPARE(rows[3], "mirrored,4,3500,4000,0.875,110,90,0.8181818181818182,2,run 4;run 4b");
    }
};

QTEST_MAIN(ScalingChartTest)
#include "scalingchart_test.moc"
