// RankBars: one bar per rank (first at the top) stacked from its compute, sending and idle time,
// each labelled with its total, tooltips naming the rank and the part, and the CSV of the figures.
#include "charttestutil.h"
#include "ui/charts/rankbars.h"

#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>

using namespace trainbench::ui;
using trainbench::ui::test::showAt;

namespace {

std::vector<RankParts> stages() {
    return {{"stage 0", 0.012, 0.001, 0.003}, {"stage 1", 0.006, 0.0005, 0.0095}};
}

QHorizontalStackedBarSeries* barsOf(RankBars& chart) {
    for (QAbstractSeries* s : chart.chart()->series())
        if (auto* b = qobject_cast<QHorizontalStackedBarSeries*>(s)) return b;
    return nullptr;
}

}  // namespace

class RankBarsTest : public QObject {
    Q_OBJECT
private slots:
    void eachRankIsABarOfItsPartsLabelledWithItsStep() {
        RankBars chart;
        chart.setRanks(stages());
        showAt(chart, {600, 240});
        QCOMPARE(chart.barLabels(), (QStringList{"16.0 ms", "16.0 ms"}));
        QHorizontalStackedBarSeries* bars = barsOf(chart);
        QVERIFY(bars);
        const QList<QBarSet*> sets = bars->barSets();
        QCOMPARE(sets.size(), 3);
        QCOMPARE(sets[0]->label(), QStringLiteral("compute"));
        QCOMPARE(sets[2]->label(), QStringLiteral("idle (bubble, waiting)"));
        // Bottom-up: stage 1 is row 0, stage 0 the top row; milliseconds on the axis.
        QCOMPARE(sets[0]->at(1), 12.0);
        QCOMPARE(sets[0]->at(0), 6.0);
        QCOMPARE(sets[2]->at(0), 9.5);
    }

    void tooltipsNameTheRankAndThePart() {
        RankBars chart;
        chart.setRanks(stages());
        showAt(chart, {600, 240});
        auto at = [&](double ms, double row) {
            return chart.mapFromScene(chart.chart()->mapToScene(chart.chart()->mapToPosition({ms, row}, barsOf(chart))));
        };
        QString tip = chart.tooltipAt(at(5.0, 1.0));
        QVERIFY2(tip.contains("stage 0: compute") && tip.contains("12.0 ms") && tip.contains("75.0 %"), qPrintable(tip));
        tip = chart.tooltipAt(at(10.0, 0.0));
        QVERIFY2(tip.contains("stage 1: idle") && tip.contains("9.50 ms"), qPrintable(tip));
        QVERIFY(chart.tooltipAt(at(17.0, 0.0)).isEmpty());
    }

    void csvHoldsEveryRanksSeconds() {
        RankBars chart;
        chart.setRanks(stages());
        QCOMPARE(chart.csv(), QString("rank,compute_seconds,send_seconds,idle_seconds\nstage 0,0.012,0.001,0.003\n"
                                      "stage 1,0.006,0.0005,0.0095\n"));
    }
};

QTEST_MAIN(RankBarsTest)
#include "rankbars_test.moc"
