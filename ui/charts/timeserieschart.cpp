#include "ui/charts/timeserieschart.h"

#include "ui/charts/axisformat.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/chartstyle.h"
#include "ui/charts/downsample.h"
#include "ui/charts/plotmapping.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainbench::ui {
namespace {

using chartstyle::kHoverRadius;

}  // namespace

TimeSeriesChart::TimeSeriesChart(QWidget* parent) : ChartView(parent) {
    xAxis_ = new QValueAxis(this);
    xAxis_->setTitleText(xTitle_);
    chart()->addAxis(xAxis_, Qt::AlignBottom);
    installYAxis();
    enableXZoom(xAxis_);
    chart()->legend()->setVisible(false);
    chart()->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
    applyPalette();
}

TimeSeriesChart::~TimeSeriesChart() = default;

void TimeSeriesChart::setTitle(const QString& title) { chart()->setTitle(title); }

void TimeSeriesChart::setAxisTitles(const QString& x, const QString& y) {
    xTitle_ = x;
    yTitle_ = y;
    xAxis_->setTitleText(x);
    yAxis_->setTitleText(y);
}

void TimeSeriesChart::setLogY(bool on) {
    if (on == logY_) return;
    logY_ = on;
    installYAxis();
    applyPalette();
    requestRedraw();
}

void TimeSeriesChart::installYAxis() {
    setAxesQuietly([this] { replaceYAxis(); });
}

void TimeSeriesChart::replaceYAxis() {
    if (yAxis_) {
        chart()->removeAxis(yAxis_);
        delete yAxis_;
    }
    if (logY_) {
        auto* axis = new QLogValueAxis(this);
        axis->setBase(10);
        axis->setLabelFormat(QStringLiteral("%g"));
        axis->setMinorTickCount(-1);
        yAxis_ = axis;
    } else {
        yAxis_ = new QValueAxis(this);
    }
    yAxis_->setTitleText(yTitle_);
    chart()->addAxis(yAxis_, Qt::AlignLeft);
    for (const auto& t : tracks_) t->attachY(yAxis_);
    for (const Reference& r : references_) r.line->attachAxis(yAxis_);
}

SeriesTrack* TimeSeriesChart::find(const QString& name) const {
    for (const auto& t : tracks_)
        if (t->name == name) return t.get();
    return nullptr;
}

SeriesTrack& TimeSeriesChart::ensureTrack(const QString& name, bool band) {
    SeriesTrack* existing = find(name);
    int colorIndex = -1;
    QColor custom;
    if (existing && existing->isBand() == band) return *existing;
    if (existing) {  // a line becoming a band or back: rebuild its Qt series, keep its colour
        colorIndex = existing->colorIndex;
        custom = existing->customColor;
        for (size_t i = 0; i < tracks_.size(); ++i)
            if (tracks_[i].get() == existing) dropTrack(i);
    }
    auto track = std::make_unique<SeriesTrack>(name, band, colorIndex >= 0 ? colorIndex : nextColor_++);
    track->customColor = custom;
    tracks_.push_back(std::move(track));
    attach(*tracks_.back());
    return *tracks_.back();
}

void TimeSeriesChart::attach(SeriesTrack& track) {
    // Qt Charts re-ranges axes on attach: that is not the user zooming.
    setAxesQuietly([&] { track.attach(chart(), xAxis_, yAxis_); });
    for (QLegendMarker* m : chart()->legend()->markers(track.line))
        connect(m, &QLegendMarker::clicked, this, &TimeSeriesChart::onMarkerClicked, Qt::UniqueConnection);
    chart()->legend()->setVisible(tracks_.size() + references_.size() > 1);
    styleTrack(track);
}

void TimeSeriesChart::dropTrack(size_t index) {
    setAxesQuietly([&] { tracks_[index]->remove(chart()); });
    tracks_.erase(tracks_.begin() + qsizetype(index));
    chart()->legend()->setVisible(tracks_.size() + references_.size() > 1);
}

void TimeSeriesChart::setSeries(const Series& series) {
    SeriesTrack& t = ensureTrack(series.name, false);
    t.points = series.points ? series.points : std::make_shared<const std::vector<QPointF>>();
    t.owned.reset();
    requestRedraw();
}

void TimeSeriesChart::setSeries(const std::vector<Series>& all) {
    for (size_t i = tracks_.size(); i-- > 0;) {
        const bool kept = std::any_of(all.begin(), all.end(), [&](const Series& s) { return s.name == tracks_[i]->name; });
        if (!kept) dropTrack(i);
    }
    for (const Series& s : all) setSeries(s);
}

void TimeSeriesChart::appendPoints(const QString& name, std::span<const QPointF> batch) {
    ensureTrack(name, false).append(batch);
    requestRedraw();
}

void TimeSeriesChart::setBand(const BandSeries& band) {
    SeriesTrack& t = ensureTrack(band.name, true);
    auto empty = std::make_shared<const std::vector<QPointF>>();
    t.points = band.mean ? band.mean : empty;
    t.lower = band.lower ? band.lower : empty;
    t.upper = band.upper ? band.upper : empty;
    t.owned.reset();
    t.members = band.members;
    requestRedraw();
}

void TimeSeriesChart::setReferenceLine(const QString& name, std::optional<double> y) {
    auto it = std::find_if(references_.begin(), references_.end(), [&](const Reference& r) { return r.name == name; });
    if (!y) {
        if (it != references_.end()) {
            setAxesQuietly([&] { chart()->removeSeries(it->line); });
            delete it->line;
            references_.erase(it);
        }
    } else if (it != references_.end()) {
        it->y = *y;
    } else {
        auto* line = new QLineSeries;
        line->setName(name);
        setAxesQuietly([&] {
            chart()->addSeries(line);
            line->attachAxis(xAxis_);
            line->attachAxis(yAxis_);
        });
        references_.push_back({name, *y, line});
        restyle();
    }
    chart()->legend()->setVisible(tracks_.size() + references_.size() > 1);
    requestRedraw();
}

void TimeSeriesChart::removeSeries(const QString& name) {
    for (size_t i = 0; i < tracks_.size(); ++i)
        if (tracks_[i]->name == name) {
            dropTrack(i);
            requestRedraw();
            return;
        }
}

void TimeSeriesChart::clear() {
    while (!references_.empty()) setReferenceLine(references_.back().name, std::nullopt);
    while (!tracks_.empty()) dropTrack(tracks_.size() - 1);
    resetZoom();
    requestRedraw();
}

void TimeSeriesChart::setSeriesColor(const QString& name, const QColor& color) {
    if (SeriesTrack* t = find(name)) {
        t->customColor = color;
        styleTrack(*t);
    }
}

void TimeSeriesChart::setSeriesVisible(const QString& name, bool visible) {
    SeriesTrack* t = find(name);
    if (!t || t->visible == visible) return;
    t->visible = visible;
    t->line->setVisible(visible);
    if (t->area) t->area->setVisible(visible);
    styleTrack(*t);
    requestRedraw();  // the y range follows the visible series
}

bool TimeSeriesChart::isSeriesVisible(const QString& name) const {
    const SeriesTrack* t = find(name);
    return t && t->visible;
}

QStringList TimeSeriesChart::seriesNames() const {
    QStringList names;
    for (const auto& t : tracks_) names << t->name;
    return names;
}

void TimeSeriesChart::onMarkerClicked() {
    auto* marker = qobject_cast<QLegendMarker*>(sender());
    if (!marker) return;
    for (const auto& t : tracks_)
        if (t->line == marker->series()) setSeriesVisible(t->name, !t->visible);
}

std::vector<Series> TimeSeriesChart::series() const {
    std::vector<Series> out;
    for (const auto& t : tracks_) {
        std::vector<Series> d = t->data();
        out.insert(out.end(), d.begin(), d.end());
    }
    return out;
}

QString TimeSeriesChart::csv() const { return chartexport::seriesCsv(xTitle_, series()); }

void TimeSeriesChart::styleTrack(SeriesTrack& t) {
    t.style(chart(), dark(), palette().color(QPalette::WindowText));
}

void TimeSeriesChart::restyle() {
    for (const auto& t : tracks_) styleTrack(*t);
    QColor ink = palette().color(QPalette::WindowText);
    ink.setAlpha(170);  // a guide, quieter than the data
    QPen dashed(ink);
    dashed.setStyle(Qt::DashLine);
    dashed.setWidthF(1.2);
    for (const Reference& r : references_) r.line->setPen(dashed);
}

QPair<double, double> TimeSeriesChart::dataXRange() const {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& t : tracks_) {
        if (!t->points || t->points->empty()) continue;
        lo = std::min(lo, t->points->front().x());
        hi = std::max(hi, t->points->back().x());
    }
    if (!(lo <= hi)) return {0.0, 1.0};
    if (lo == hi) return {lo - 0.5, hi + 0.5};
    return {lo, hi};
}

int TimeSeriesChart::bucketCount() const {
    const double plotWidth = chart()->plotArea().width();
    const double w = plotWidth > 1 ? plotWidth : width() * 0.9;
    return std::max(16, int(std::ceil(w)));
}

void TimeSeriesChart::redraw() {
    const auto [x0, x1] = xRange();
    const int buckets = bucketCount();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    std::vector<std::pair<QLineSeries*, QList<QPointF>>> shown;
    auto bucket = [&](QLineSeries* target, const PointsPtr& source, bool visible) {
        // A series hidden from the legend costs nothing until it is shown again.
        QList<QPointF> points = source && visible ? minMaxDownsample(*source, x0, x1, buckets) : QList<QPointF>();
        if (logY_) points.removeIf([](const QPointF& p) { return p.y() <= 0; });
        if (visible)
            for (const QPointF& p : points)
                if (p.x() >= x0 && p.x() <= x1) {
                    lo = std::min(lo, p.y());
                    hi = std::max(hi, p.y());
                }
        shown.emplace_back(target, std::move(points));
    };
    for (const auto& t : tracks_) {
        bucket(t->line, t->points, t->visible);
        if (t->isBand()) {
            bucket(t->upperLine, t->upper, t->visible);
            bucket(t->lowerLine, t->lower, t->visible);
        }
    }
    for (const Reference& r : references_) {
        if (logY_ && r.y <= 0) {
            shown.emplace_back(r.line, QList<QPointF>());
            continue;
        }
        lo = std::min(lo, r.y);
        hi = std::max(hi, r.y);
        shown.emplace_back(r.line, QList<QPointF>{{x0, r.y}, {x1, r.y}});
    }
    // y fits what is visible in the x range, with a margin so lines do not run along the frame.
    if (!(lo <= hi)) {
        lo = logY_ ? 0.1 : 0.0;
        hi = logY_ ? 10.0 : 1.0;
    } else if (logY_) {
        lo /= 1.25;
        hi *= 1.25;
    } else {
        const double pad = hi > lo ? (hi - lo) * 0.05 : std::max(std::abs(hi) * 0.1, 0.5);
        lo -= pad;
        hi += pad;
    }
    yMin_ = lo;
    yMax_ = hi;
    // Qt Charts rebuilds a line's geometry (and strokes its hover shape) on every axis change:
    // empty the lines, set the axes, then hand over the new points, so that happens once.
    for (auto& [series, points] : shown)
        if (series->count() > 0) series->clear();
    const QRectF plot = chart()->plotArea();
    const double plotWidth = plot.width() > 1 ? plot.width() : width();
    for (const auto& t : tracks_) {
        const auto it = std::find_if(shown.begin(), shown.end(), [&](const auto& s) { return s.first == t->line; });
        const bool dense = it != shown.end() && double(it->second.size()) > plotWidth / 2;
        if (dense != t->dense) {
            t->dense = dense;
            styleTrack(*t);
        }
    }
    setAxesQuietly([&] {
        chartstyle::setTicks(xAxis_, x0, x1, plotWidth, kXTickPixels);
        if (auto* linear = qobject_cast<QValueAxis*>(yAxis_))
            chartstyle::setTicks(linear, lo, hi, plot.height() > 1 ? plot.height() : height(), 45);
        else
            yAxis_->setRange(lo, hi);
    });
    for (auto& [series, points] : shown) series->replace(points);
}

QString TimeSeriesChart::tooltipAt(const QPointF& pos) const {
    const QPointF at = toChart(pos);
    const QRectF plot = chart()->plotArea();
    if (!plot.adjusted(-kHoverRadius, -kHoverRadius, kHoverRadius, kHoverRadius).contains(at)) return {};
    const PlotMapping mapping{plot, xAxis_->min(), xAxis_->max(), yMin_, yMax_, logY_};
    const SeriesTrack* best = nullptr;
    const std::vector<QPointF>* bestPoints = nullptr;
    NearestHit hit;
    for (const auto& t : tracks_) {
        if (!t->visible) continue;
        for (const PointsPtr& source : {t->points, t->lower, t->upper}) {
            if (!source) continue;
            const auto h = nearestPoint(*source, mapping, at, kHoverRadius);
            if (h && (!best || h->distance < hit.distance)) {
                best = t.get();
                bestPoints = source.get();
                hit = *h;
            }
        }
    }
    if (!best) {
        for (const Reference& r : references_) {
            if (logY_ && r.y <= 0) continue;
            if (std::abs(mapping.toPixel({mapping.xMin, r.y}).y() - at.y()) <= 5)
                return QStringLiteral("<b>%1</b><br>%2").arg(r.name.toHtmlEscaped(), axisformat::value(r.y));
        }
        return {};
    }
    const QString xName = xTitle_.isEmpty() ? QStringLiteral("x") : xTitle_;
    const QString yName = yTitle_.isEmpty() ? QStringLiteral("y") : yTitle_;
    const QPointF p = (*bestPoints)[hit.index];
    QString text = QStringLiteral("<b>%1</b>").arg(best->name.toHtmlEscaped());
    const bool onGrid = best->isBand() && hit.index < best->points->size() && hit.index < best->lower->size() &&
                        hit.index < best->upper->size();
    if (onGrid) {
        // Mean, min and max share the grid: one index names the x in all three.
        text += QStringLiteral(" (%1 series)<br>%2: %3<br>mean: %4<br>min – max: %5 – %6")
                    .arg(best->members)
                    .arg(xName.toHtmlEscaped(), axisformat::value(p.x()),
                         axisformat::value((*best->points)[hit.index].y()),
                         axisformat::value((*best->lower)[hit.index].y()),
                         axisformat::value((*best->upper)[hit.index].y()));
    } else {
        text += QStringLiteral("<br>%1: %2<br>%3: %4")
                    .arg(xName.toHtmlEscaped(), axisformat::value(p.x()), yName.toHtmlEscaped(),
                         axisformat::value(p.y()));
    }
    return text;
}

QLineSeries* TimeSeriesChart::lineSeries(const QString& name) const {
    const SeriesTrack* t = find(name);
    return t ? t->line : nullptr;
}

QAreaSeries* TimeSeriesChart::bandArea(const QString& name) const {
    const SeriesTrack* t = find(name);
    return t ? t->area : nullptr;
}

}  // namespace trainbench::ui
