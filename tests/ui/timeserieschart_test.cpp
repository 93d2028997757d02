// TimeSeriesChart: a million points stay a few thousand on screen, zoom re-buckets the visible
// range, live appends are throttled, and hover, legend, log axis and bands do what users expect.
#include "charttestutil.h"
#include "ui/charts/timeserieschart.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <cmath>

using namespace trainbench::ui;
using trainbench::ui::test::settle;
using trainbench::ui::test::showAt;
using trainbench::ui::test::widgetPos;

namespace {

Series sawtooth(const QString& name, int n) {
    std::vector<QPointF> p;
    p.reserve(size_t(n));
    for (int i = 0; i < n; ++i) p.emplace_back(i, (i % 1000) / 1000.0 + std::sin(i * 0.001));
    return Series::make(name, std::move(p));
}

std::pair<double, double> yExtent(const QList<QPointF>& points) {
    double lo = 1e300, hi = -1e300;
    for (const QPointF& p : points) {
        lo = std::min(lo, p.y());
        hi = std::max(hi, p.y());
    }
    return {lo, hi};
}

}  // namespace

class TimeSeriesChartTest : public QObject {
    Q_OBJECT
private slots:
    void millionPointsDrawAsAFewThousand() {
        TimeSeriesChart chart;
        const Series s = sawtooth("loss", 1'000'000);
        chart.setSeries(s);
        showAt(chart, {1200, 500});
        QLineSeries* line = chart.lineSeries("loss");
        QVERIFY(line);
        QVERIFY2(line->count() <= 2 * 1200 + 4, qPrintable(QString::number(line->count())));
        QVERIFY(line->count() >= 500);
        // The envelope survives: the global extremes are drawn.
        const auto [lo, hi] = yExtent(line->points());
        const auto [dataLo, dataHi] = yExtent(QList<QPointF>(s.points->begin(), s.points->end()));
        QCOMPARE(lo, dataLo);
        QCOMPARE(hi, dataHi);
        QCOMPARE(line->points().front(), s.points->front());
        QCOMPARE(line->points().back(), s.points->back());
    }

    void zoomRebucketsTheVisibleRange() {
        TimeSeriesChart chart;
        const Series s = sawtooth("loss", 1'000'000);
        chart.setSeries(s);
        showAt(chart, {1200, 500});
        QSignalSpy zoomed(&chart, &ChartView::xRangeChanged);
        chart.setXRange(400'000, 600'000);
        settle(chart);
        QVERIFY(chart.isZoomed());
        QCOMPARE(zoomed.count(), 1);
        QList<QPointF> shown = chart.lineSeries("loss")->points();
        QVERIFY(shown.size() <= 2 * 1200 + 4);
        QCOMPARE(shown.front().x(), 399'999.0);  // one point beyond each edge
        QCOMPARE(shown.back().x(), 600'001.0);
        for (qsizetype i = 1; i + 1 < shown.size(); ++i) QVERIFY(shown[i].x() >= 400'000 && shown[i].x() <= 600'000);
        // Few points in view: every one of them, at full detail.
        chart.setXRange(500'000, 500'100);
        settle(chart);
        shown = chart.lineSeries("loss")->points();
        QCOMPARE(shown.size(), 101 + 2);
        for (qsizetype i = 0; i < shown.size(); ++i) QCOMPARE(shown[i], (*s.points)[size_t(499'999 + i)]);
        // The y axis fits the visible part.
        const auto* y = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical).first());
        const auto [lo, hi] = yExtent(shown.mid(1, 101));
        QVERIFY(y->min() <= lo && y->min() > lo - (hi - lo) * 0.2);
        QVERIFY(y->max() >= hi && y->max() < hi + (hi - lo) * 0.2);
    }

    void escapeAndDoubleClickResetZoom() {
        TimeSeriesChart chart;
        chart.setSeries(sawtooth("loss", 10'000));
        showAt(chart, {800, 400});
        chart.setXRange(100, 200);
        settle(chart);
        QTest::keyClick(&chart, Qt::Key_Escape);
        settle(chart);
        QVERIFY(!chart.isZoomed());
        QCOMPARE(chart.xRange(), qMakePair(0.0, 9'999.0));
        QCOMPARE(chart.lineSeries("loss")->points().back().x(), 9'999.0);
        chart.setXRange(100, 200);
        settle(chart);
        QTest::mouseDClick(chart.viewport(), Qt::LeftButton, {}, chart.viewport()->rect().center());
        settle(chart);
        QVERIFY(!chart.isZoomed());
    }

    void wheelZoomsInAroundTheCursor() {
        TimeSeriesChart chart;
        chart.setSeries(sawtooth("loss", 10'000));
        showAt(chart, {800, 400});
        const QPointF at = widgetPos(chart, {5'000, 0}, chart.lineSeries("loss"));
        QWheelEvent wheel(at, chart.mapToGlobal(at), {}, {0, 120 * 3}, Qt::NoButton, {}, Qt::NoScrollPhase, false);
        QApplication::sendEvent(chart.viewport(), &wheel);
        settle(chart);
        const auto [lo, hi] = chart.xRange();
        QVERIFY(chart.isZoomed());
        QVERIFY(hi - lo < 9'999.0 / 1.9);  // 1.25³ ≈ 1.95× in
        QVERIFY(lo < 5'000 && hi > 5'000);
    }

    void rubberBandZooms() {
        TimeSeriesChart chart;
        chart.setSeries(sawtooth("loss", 10'000));
        showAt(chart, {800, 400});
        QLineSeries* line = chart.lineSeries("loss");
        const QPoint a = widgetPos(chart, {2'000, 0.5}, line).toPoint();
        const QPoint b = widgetPos(chart, {4'000, 0.5}, line).toPoint();
        QTest::mousePress(chart.viewport(), Qt::LeftButton, {}, a);
        QTest::mouseMove(chart.viewport(), (a + b) / 2);
        QTest::mouseMove(chart.viewport(), b);
        QTest::mouseRelease(chart.viewport(), Qt::LeftButton, {}, b);
        settle(chart);
        const auto [lo, hi] = chart.xRange();
        QVERIFY2(std::abs(lo - 2'000) < 60 && std::abs(hi - 4'000) < 60, qPrintable(QString("%1 – %2").arg(lo).arg(hi)));
    }

    void liveAppendsAreThrottled() {
        TimeSeriesChart chart;
        showAt(chart, {800, 400});
        chart.appendPoints("throughput", std::vector<QPointF>{{0, 1.0}});
        settle(chart);
        QSignalSpy redraws(chart.lineSeries("throughput"), &QXYSeries::pointsReplaced);
        QElapsedTimer clock;
        clock.start();
        int step = 1;
        while (clock.elapsed() < 500) {
            std::vector<QPointF> batch;
            for (int i = 0; i < 10; ++i, ++step) batch.emplace_back(step, 1.0 + (step % 7) * 0.1);
            chart.appendPoints("throughput", batch);
            QTest::qWait(1);
        }
        const qint64 ms = clock.elapsed();
        settle(chart);
        // ≤ 30 Hz: one redraw per 33 ms at most (+2 for the edges of the window).
        QVERIFY2(redraws.count() <= ms / 33 + 2, qPrintable(QString("%1 redraws in %2 ms").arg(redraws.count()).arg(ms)));
        QVERIFY(redraws.count() >= 3);
        QCOMPARE(chart.series().front().size(), size_t(step));
        QCOMPARE(chart.lineSeries("throughput")->points().back().x(), double(step - 1));
    }

    void appendAfterHandingOutCopiesInsteadOfMutating() {
        TimeSeriesChart chart;
        chart.appendPoints("loss", std::vector<QPointF>{{0, 1}, {1, 2}});
        const std::vector<Series> handedOut = chart.series();
        chart.appendPoints("loss", std::vector<QPointF>{{2, 3}});
        QCOMPARE(handedOut.front().size(), size_t(2));
        QCOMPARE(chart.series().front().size(), size_t(3));
    }

    void hoverNamesTheNearestOriginalPoint() {
        TimeSeriesChart chart;
        chart.setAxisTitles("step", "loss");
        chart.setSeries(Series::make("train loss", {{0, 2.0}, {10, 1.5}, {20, 1.25}, {30, 1.0}}));
        chart.setSeries(Series::make("test loss", {{0, 0.25}, {30, 0.5}}));
        showAt(chart, {800, 400});
        const QPointF at = widgetPos(chart, {20, 1.25}, chart.lineSeries("train loss")) + QPointF(3, -2);
        const QString text = chart.tooltipAt(at);
        QVERIFY2(text.contains("train loss") && text.contains("step: 20") && text.contains("loss: 1.25"), qPrintable(text));
        QVERIFY(chart.tooltipAt(widgetPos(chart, {30, 0.5}, chart.lineSeries("test loss"))).contains("test loss"));
        // Far from every point: nothing.
        QVERIFY(chart.tooltipAt(widgetPos(chart, {5, 0.9}, chart.lineSeries("train loss"))).isEmpty());
    }

    void legendClickTogglesASeries() {
        TimeSeriesChart chart;
        chart.setSeries(Series::make("a", {{0, 1}, {1, 2}}));
        chart.setSeries(Series::make("b", {{0, 10}, {1, 20}}));
        showAt(chart, {800, 400});
        QLegendMarker* marker = chart.chart()->legend()->markers(chart.lineSeries("b")).first();
        emit marker->clicked();
        settle(chart);
        QVERIFY(!chart.isSeriesVisible("b"));
        QVERIFY(!chart.lineSeries("b")->isVisible());
        QVERIFY(marker->isVisible());  // stays in the legend, to be clicked back
        // The y range follows the visible series.
        const auto* y = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical).first());
        QVERIFY(y->max() < 5);
        emit marker->clicked();
        settle(chart);
        QVERIFY(chart.isSeriesVisible("b"));
    }

    void logYDropsNonPositivePoints() {
        TimeSeriesChart chart;
        chart.setSeries(Series::make("loss", {{0, 0.0}, {1, 10.0}, {2, 1.0}, {3, 0.1}}));
        chart.setLogY(true);
        showAt(chart, {800, 400});
        QVERIFY(qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Vertical).first()));
        QCOMPARE(chart.lineSeries("loss")->count(), 3);
        chart.setLogY(false);
        settle(chart);
        QCOMPARE(chart.lineSeries("loss")->count(), 4);
    }

    void referenceLineSpansThePlotAndFitsTheRange() {
        TimeSeriesChart chart;
        chart.setSeries(Series::make("accuracy", {{0, 0.1}, {100, 0.8}, {200, 0.9}}));
        chart.setReferenceLine("target 97 %", 0.97);
        showAt(chart, {800, 400});
        const auto* y = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical).first());
        QVERIFY(y->max() >= 0.97);
        QLineSeries* target = nullptr;
        for (QAbstractSeries* s : chart.chart()->series())
            if (s->name() == "target 97 %") target = qobject_cast<QLineSeries*>(s);
        QVERIFY(target);
        QCOMPARE(target->points(), (QList<QPointF>{{0, 0.97}, {200, 0.97}}));
        QVERIFY(chart.tooltipAt(widgetPos(chart, {50, 0.97}, target)).contains("target 97 %"));
        chart.setReferenceLine("target 97 %", std::nullopt);
        settle(chart);
        QCOMPARE(chart.chart()->series().size(), 1);
        QVERIFY(y->max() < 0.97);
    }

    void groupedSeedsDrawAMeanLineAndABand() {
        TimeSeriesChart chart;
        const std::vector<Series> seeds = {Series::make("s1", {{0, 0.1}, {1, 0.5}, {2, 0.8}}),
                                           Series::make("s2", {{0, 0.2}, {1, 0.6}, {2, 0.9}}),
                                           Series::make("s3", {{0, 0.15}, {1, 0.4}, {2, 0.85}})};
        chart.setBand(aggregateBand("mlp", seeds));
        chart.setBand(aggregateBand("cnn", {Series::make("s1", {{0, 0.3}, {2, 0.95}})}));
        showAt(chart, {800, 400});
        QAreaSeries* band = chart.bandArea("mlp");
        QVERIFY(band);
        QCOMPARE(band->upperSeries()->points(), (QList<QPointF>{{0, 0.2}, {1, 0.6}, {2, 0.9}}));
        QCOMPARE(band->lowerSeries()->points(), (QList<QPointF>{{0, 0.1}, {1, 0.4}, {2, 0.8}}));
        QCOMPARE(chart.lineSeries("mlp")->points()[1].y(), 0.5);
        // One legend entry per group (its mean line), none for the bands.
        int shownMarkers = 0;
        for (QLegendMarker* m : chart.chart()->legend()->markers()) shownMarkers += m->isVisible();
        QCOMPARE(shownMarkers, 2);
        const QString tip = chart.tooltipAt(widgetPos(chart, {1, 0.5}, chart.lineSeries("mlp")));
        QVERIFY2(tip.contains("mlp") && tip.contains("3 series") && tip.contains("0.4 – 0.6"), qPrintable(tip));
        // CSV: every group's mean, min and max at full resolution; empty where a group has no x.
        const QStringList rows = chart.csv().split('\n');
        QCOMPARE(rows[0], "step,mlp (mean),mlp (min),mlp (max),cnn (mean),cnn (min),cnn (max)");
        QCOMPARE(rows[2], "1,0.5,0.4,0.6,,,");
        QCOMPARE(rows[3], "2,0.8500000000000001,0.8,0.9,0.95,0.95,0.95");
    }
};

QTEST_MAIN(TimeSeriesChartTest)
#include "timeserieschart_test.moc"
