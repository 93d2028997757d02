#pragma once
// Helpers of the chart tests: a chart shown at a given size with its redraw applied, and the
// widget position of a data value, for hover and click tests.
#include "ui/charts/chartview.h"

#include <QtCharts/QAbstractSeries>
#include <QtCharts/QChart>
#include <QtTest/QtTest>

namespace trainbench::ui::test {

inline void showAt(ChartView& chart, QSize size) {
    chart.resize(size);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    // Two rounds: the first redraw changes axis labels, the layout settles the plot area.
    for (int i = 0; i < 2; ++i) {
        QCoreApplication::processEvents();
        chart.refreshNow();
    }
    QCoreApplication::processEvents();
}

inline void settle(ChartView& chart) {
    chart.refreshNow();
    QCoreApplication::processEvents();
}

// Where Qt Charts draws `value` of `series`, in the chart widget's coordinates.
inline QPointF widgetPos(ChartView& chart, const QPointF& value, QAbstractSeries* series) {
    const QPointF inChart = chart.chart()->mapToPosition(value, series);
    return chart.mapFromScene(chart.chart()->mapToScene(inChart));
}

}  // namespace trainbench::ui::test
