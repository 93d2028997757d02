#pragma once
// One named series of a TimeSeriesChart: its full-resolution data and the Qt Charts objects
// that draw it — a line, or a mean line over a min–max band (a seed group).
#include "ui/charts/series.h"

#include <QColor>

#include <span>

QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QAreaSeries;
class QChart;
class QLineSeries;
QT_END_NAMESPACE

namespace trainbench::ui {

struct SeriesTrack {
    // Creates the Qt series; they belong to the chart once attach() added them.
    SeriesTrack(QString trackName, bool band, int color);
    SeriesTrack(const SeriesTrack&) = delete;
    SeriesTrack& operator=(const SeriesTrack&) = delete;

    bool isBand() const { return area != nullptr; }
    // Adds the Qt series to `chart` on the axes, the band below its mean line.
    void attach(QChart* chart, QAbstractAxis* x, QAbstractAxis* y);
    void attachY(QAbstractAxis* y);
    // Removes the Qt series from `chart` and deletes them.
    void remove(QChart* chart);
    // Pen, band brush and legend entry (dimmed while hidden) for the background.
    void style(QChart* chart, bool dark, const QColor& text);

    // Live runs: appends in place after one copy; series x stays sorted.
    void append(std::span<const QPointF> batch);
    // The data as series (a band as its mean, min and max). Handing it out ends in-place
    // appends: the next append copies, so a reader on another thread never sees a write.
    std::vector<Series> data();

    QString name;
    PointsPtr points;  // a line's data; a band's mean
    std::shared_ptr<std::vector<QPointF>> owned;  // `points`, while nobody else holds it
    PointsPtr lower, upper;  // a band's min and max, on the mean's grid
    int members = 0;         // series aggregated into the band
    QLineSeries* line = nullptr;
    QAreaSeries* area = nullptr;  // bands only; owns upperLine and lowerLine
    QLineSeries* upperLine = nullptr;
    QLineSeries* lowerLine = nullptr;
    int colorIndex = 0;
    QColor customColor;
    bool visible = true;
    bool dense = false;  // drawn with more than a point per two pixels
};

}  // namespace trainbench::ui
