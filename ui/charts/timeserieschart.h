#pragma once
// Lines over steps, wall time or cost (loss, accuracy, throughput, memory): any number of named
// series, each kept at full resolution and drawn min/max-bucketed at the plot's pixel width, so a
// million points redraw in milliseconds; zoom re-buckets the visible range. A group of series
// (seeds) can be drawn as its mean with a min–max band. Live runs append in batches; redraws are
// throttled to 30 Hz.
#include "ui/charts/bandseries.h"
#include "ui/charts/chartview.h"
#include "ui/charts/series.h"
#include "ui/charts/seriestrack.h"

#include <QColor>

#include <memory>
#include <optional>
#include <span>
#include <vector>

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QLineSeries;
class QValueAxis;
class QLogValueAxis;
class QAbstractAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

class TimeSeriesChart : public ChartView {
    Q_OBJECT
public:
    explicit TimeSeriesChart(QWidget* parent = nullptr);
    ~TimeSeriesChart() override;

    void setTitle(const QString& title);
    void setAxisTitles(const QString& x, const QString& y);
    // Logarithmic y (loss over orders of magnitude); points with y ≤ 0 are then not drawn.
    void setLogY(bool on);
    bool logY() const { return logY_; }

    // Adds the series, or replaces the data of the one with the same name.
    void setSeries(const Series& series);
    // Makes `all` the chart's series: others are removed, same-named ones keep their colour.
    void setSeries(const std::vector<Series>& all);
    // Live runs: appends a batch (x ascending, after the series' last x) to the named series,
    // creating it if needed. The data is copied once, then appended in place.
    void appendPoints(const QString& name, std::span<const QPointF> batch);
    // A seed group: mean line and min–max band, one legend entry.
    void setBand(const BandSeries& band);
    void removeSeries(const QString& name);
    void clear();  // every series and reference line
    void setSeriesColor(const QString& name, const QColor& color);
    void setSeriesVisible(const QString& name, bool visible);
    bool isSeriesVisible(const QString& name) const;
    QStringList seriesNames() const;
    // A dashed horizontal line at `y` across the plot, e.g. the accuracy target or the device's
    // memory; nullopt removes it. The y range always includes it.
    void setReferenceLine(const QString& name, std::optional<double> y);

    // The full-resolution data: a line as is; a band as its mean, min and max. Immutable and
    // shared: for a big export, chartexport::seriesCsv(xAxisTitle(), series()) can run on a
    // worker thread.
    std::vector<Series> series() const;
    QString xAxisTitle() const { return xTitle_; }
    QString csv() const override;
    QString tooltipAt(const QPointF& pos) const override;

    // What Qt Charts draws for a series (tests, benchmarks).
    QLineSeries* lineSeries(const QString& name) const;
    QAreaSeries* bandArea(const QString& name) const;

protected:
    void redraw() override;
    QPair<double, double> dataXRange() const override;
    void restyle() override;

private:
    SeriesTrack* find(const QString& name) const;
    SeriesTrack& ensureTrack(const QString& name, bool band);
    void dropTrack(size_t index);
    void attach(SeriesTrack& track);
    void styleTrack(SeriesTrack& track);
    void installYAxis();
    void replaceYAxis();
    void onMarkerClicked();
    int bucketCount() const;

    struct Reference {
        QString name;
        double y = 0.0;
        QLineSeries* line = nullptr;
    };
    std::vector<std::unique_ptr<SeriesTrack>> tracks_;
    std::vector<Reference> references_;
    QValueAxis* xAxis_ = nullptr;
    QAbstractAxis* yAxis_ = nullptr;
    QString xTitle_ = QStringLiteral("step");
    QString yTitle_;
    bool logY_ = false;
    double yMin_ = 0.0, yMax_ = 1.0;
    int nextColor_ = 0;
};

}  // namespace trainbench::ui
