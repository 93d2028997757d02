// Data scaling in the GUI: the chart draws each size's mean (in percent), a bar over the seeds'
// spread and the power law on a log2 axis of training examples; the Compare page offers (and shows)
// it for runs read from a store that differ in data.fraction, and not for runs of one size.
#include <QTemporaryDir>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtTest>

#include <cmath>

#include "charttestutil.h"
#include "profiler/store/runwriter.h"
#include "ui/charts/datascalingchart.h"
#include "ui/mainwindow.h"
#include "ui/models/comparesummarymodel.h"
#include "ui/pages/compare/comparepage.h"
#include "ui/store/storeservice.h"

using namespace trainbench;
using namespace trainbench::ui;
using trainbench::ui::test::showAt;
using trainbench::ui::test::widgetPos;

namespace {

std::string config(double fraction, int seed) {
    return R"({"name": "sweep", "seed": )" + std::to_string(seed) + R"(, "data": {"fraction": )" +
           std::to_string(fraction) + R"(}, "model": {"preset": "logreg"}})";
}

profiler::RunRow row(int64_t id, double fraction, int seed, int64_t examples, double best) {
    profiler::RunRow r;
    r.id = profiler::RunId{id};
    r.name = "sweep-fraction" + QString::number(fraction).toStdString() + "-seed" + std::to_string(seed);
    r.status = profiler::RunStatus::Completed;
    r.config_json = config(fraction, seed);
    r.train_examples = examples;
    r.data_fraction = fraction;
    r.best_accuracy = best;
    return r;
}

// Error 0.3 x (examples / 1875)^-0.25 at three sizes; two seeds at the smallest, 1 point apart.
profiler::DataScaling sweep() {
    std::vector<profiler::DataScalingRun> runs;
    runs.push_back(profiler::dataScalingRun(row(1, 0.03125, 1, 1875, 1 - 0.31), {}));
    runs.push_back(profiler::dataScalingRun(row(2, 0.03125, 2, 1875, 1 - 0.29), {}));
    runs.push_back(profiler::dataScalingRun(row(3, 0.25, 1, 15000, 1 - 0.3 * std::pow(8.0, -0.25)), {}));
    runs.push_back(profiler::dataScalingRun(row(4, 1.0, 1, 60000, 1 - 0.3 * std::pow(32.0, -0.25)), {}));
    return profiler::dataScalingOf(runs, profiler::DataScalingMetric::TestError);
}

QLineSeries* seriesNamed(DataScalingChart& chart, const QString& name) {
    for (QAbstractSeries* s : chart.chart()->series())
        if (s->name() == name) return qobject_cast<QLineSeries*>(s);
    return nullptr;
}

}  // namespace

class DataScalingChartTest : public QObject {
    Q_OBJECT
private slots:
    void drawsMeansSpreadAndThePowerLawOnALog2Axis() {
        DataScalingChart chart;
        chart.setScaling(sweep());
        showAt(chart, {760, 460});
        QLineSeries* mean = seriesNamed(chart, "sweep");
        QVERIFY(mean);
        const QList<QPointF> pts = mean->points();
        QCOMPARE(pts.size(), 3);
        QCOMPARE(pts[0], QPointF(1875, 30.0));  // percent: the mean of 31 % and 29 %
        QCOMPARE(pts[1].x(), 15000.0);
        QVERIFY(std::fabs(pts[2].y() - 30.0 * std::pow(32.0, -0.25)) < 1e-9);
        // One spread bar (the two seeds), from 29 % to 31 %.
        int bars = 0;
        for (QAbstractSeries* s : chart.chart()->series()) {
            auto* line = qobject_cast<QLineSeries*>(s);
            if (!line || line == mean || !line->name().isEmpty()) continue;
            ++bars;
            double lo = 1e9, hi = -1e9;
            for (const QPointF& p : line->points()) lo = std::min(lo, p.y()), hi = std::max(hi, p.y());
            QVERIFY(std::fabs(lo - 29.0) < 1e-9 && std::fabs(hi - 31.0) < 1e-9);
        }
        QCOMPARE(bars, 1);
        // The power law through the points: slope -0.25 is recovered (the smallest size's mean is on it).
        QLineSeries* fit = seriesNamed(chart, "sweep: power law, slope -0.250");
        QVERIFY2(fit, "no fit series");
        QVERIFY(std::fabs(fit->points().first().y() - 30.0) < 0.5);
        QCOMPARE(chart.fitTexts().size(), 1);
        QVERIFY2(chart.fitTexts().first().contains("examples^-0.250"), qPrintable(chart.fitTexts().first()));
        // x: a log2 axis with whole powers of two around the data.
        auto* x = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Horizontal).first());
        QVERIFY(x);
        QCOMPARE(x->base(), 2.0);
        QCOMPARE(x->min(), 1024.0);
        QCOMPARE(x->max(), 65536.0);
        // Hover on the smallest size: its examples, fraction, mean and the two runs.
        const QString tip = chart.tooltipAt(widgetPos(chart, QPointF(1875, 30.0), mean));
        QVERIFY2(tip.contains("1875 training examples") && tip.contains("data.fraction 0.03125") &&
                     tip.contains("30.00 %") && tip.contains("mean of 2 runs, 29.00 % to 31.00 %") && tip.contains("#1, #2"),
                 qPrintable(tip));
        QVERIFY(chart.csv().startsWith("series,examples,fraction,runs,test_error_mean"));
        QVERIFY(chart.csv().contains("sweep,1875,0.03125,2,0.3"));
    }

    void theComparePageShowsDataScalingForRunsOfDifferentSizes() {
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("runs.db")).toStdString();
        // Runs as the run store holds them: the scale columns, test evaluations, a finished summary.
        auto record = [&](double fraction, int seed, int64_t examples, double accuracy) {
            profiler::RunSpec spec;
            spec.name = "sweep-fraction" + QString::number(fraction).toStdString() + "-seed" + std::to_string(seed);
            spec.config_json = config(fraction, seed);
            spec.train_examples = examples;
            spec.data_fraction = fraction;
            profiler::RunWriter w(db, spec);
            engine::EvalRecord e;
            e.step = 10;
            e.split = "test";
            e.accuracy = accuracy;
            e.loss = 1.0 - accuracy;
            w.eval(e);
            engine::RunSummary s;
            s.steps = 10;
            s.evaluations = 1;
            s.final_accuracy = s.best_accuracy = accuracy;
            w.finish(profiler::RunStatus::Completed, s);
            return static_cast<qint64>(w.runId().value);
        };
        const QList<qint64> sweepIds = {record(0.25, 1, 15000, 0.80), record(0.0625, 1, 3750, 0.72),
                                        record(1.0, 1, 60000, 0.85), record(0.0625, 2, 3750, 0.74)};
        const QList<qint64> oneSize = {record(1.0, 2, 60000, 0.86), record(1.0, 3, 60000, 0.84)};

        MainWindow w(QString::fromStdString(db));
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.store().runs() != nullptr, 10000);
        ComparePage* page = w.comparePage();
        // Two of the runs first, then all four: the runs compared before must stay in the comparison.
        page->compare(sweepIds.mid(0, 2));
        QTRY_COMPARE_WITH_TIMEOUT(page->summaryModel()->columnCount(), 3, 10000);
        page->compare(sweepIds);
        QTRY_VERIFY_WITH_TIMEOUT(page->dataScalingAvailable() && !page->dataScalingChart()->scaling().curves.empty() &&
                                     page->dataScalingChart()->scaling().curves.front().points.size() == 3,
                                 10000);
        QCOMPARE(page->summaryModel()->columnCount(), 5);
        QVERIFY(page->dataScalingShown());
        const profiler::DataScalingCurve& c = page->dataScalingChart()->scaling().curves.front();
        QCOMPARE(c.points.size(), size_t(3));
        QCOMPARE(c.points[0].examples, int64_t(3750));
        QVERIFY(std::fabs(c.points[0].mean - 0.27) < 1e-12);  // 1 - (0.72 + 0.74) / 2
        QCOMPARE(c.points[0].runs.size(), size_t(2));
        QCOMPARE(c.points[2].examples, int64_t(60000));
        QVERIFY(c.fit);
        QVERIFY(c.fit->slope < 0);
        // The final test loss instead: from the evaluations.
        page->setDataScalingMetric(profiler::DataScalingMetric::TestLoss);
        QVERIFY(std::fabs(page->dataScalingChart()->scaling().curves.front().points[1].mean - 0.20) < 1e-12);

        // Runs of one size scale no data: the tab is not offered.
        page->compare(oneSize);
        QTRY_COMPARE_WITH_TIMEOUT(page->summaryModel()->columnCount(), 3, 10000);  // both runs read
        QTest::qWait(100);
        QVERIFY(!page->dataScalingAvailable());
        QVERIFY(!page->dataScalingShown());
    }
};

QTEST_MAIN(DataScalingChartTest)
#include "datascalingchart_test.moc"
