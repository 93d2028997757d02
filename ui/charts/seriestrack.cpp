#include "ui/charts/seriestrack.h"

#include "ui/charts/chartstyle.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>

#include <algorithm>

namespace trainbench::ui {
namespace {

bool byX(const QPointF& a, const QPointF& b) { return a.x() < b.x(); }

}  // namespace

SeriesTrack::SeriesTrack(QString trackName, bool band, int color)
    : name(std::move(trackName)), points(std::make_shared<const std::vector<QPointF>>()), colorIndex(color) {
    if (band) {
        upperLine = new QLineSeries;
        lowerLine = new QLineSeries;
        area = new QAreaSeries(upperLine, lowerLine);
        upperLine->setParent(area);
        lowerLine->setParent(area);
        area->setName(name);
        lower = upper = points;
    }
    line = new QLineSeries;
    line->setName(name);
}

void SeriesTrack::attach(QChart* chart, QAbstractAxis* x, QAbstractAxis* y) {
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(area), static_cast<QAbstractSeries*>(line)}) {
        if (!s) continue;
        chart->addSeries(s);
        s->attachAxis(x);
        s->attachAxis(y);
    }
}

void SeriesTrack::attachY(QAbstractAxis* y) {
    line->attachAxis(y);
    if (area) area->attachAxis(y);
}

void SeriesTrack::remove(QChart* chart) {
    chart->removeSeries(line);
    delete line;
    line = nullptr;
    if (area) {
        chart->removeSeries(area);
        delete area;
        area = nullptr;
        upperLine = lowerLine = nullptr;
    }
}

void SeriesTrack::style(QChart* chart, bool dark, const QColor& text) {
    const QColor color = customColor.isValid() ? customColor : chartstyle::seriesColor(colorIndex, dark);
    QPen pen(color);
    // Dense lines (more than a point per two pixels) are drawn 1 px wide: that is the raster
    // engine's fast path, and a thick pen only smears a noisy min/max envelope.
    pen.setWidthF(dense ? 1.0 : 1.6);
    line->setPen(pen);
    if (area) {
        area->setBrush(chartstyle::bandColor(color, dark));
        area->setPen(Qt::NoPen);
        for (QLegendMarker* m : chart->legend()->markers(area)) m->setVisible(false);
    }
    // A hidden series keeps a dimmed legend entry, to be clicked back on.
    for (QLegendMarker* m : chart->legend()->markers(line)) {
        m->setVisible(true);
        QColor label = text;
        QColor swatch = color;
        if (!visible) {
            label.setAlpha(90);
            swatch.setAlpha(60);
        }
        m->setLabelBrush(label);
        m->setBrush(swatch);
        m->setPen(QPen(swatch));
    }
}

void SeriesTrack::append(std::span<const QPointF> batch) {
    if (!owned) {
        auto copy = std::make_shared<std::vector<QPointF>>();
        const size_t have = points ? points->size() : 0;
        copy->reserve(std::max<size_t>(have * 2, have + batch.size()));
        if (points) copy->assign(points->begin(), points->end());
        owned = copy;
        points = copy;
    }
    std::vector<QPointF>& grown = *owned;
    const bool inOrder = batch.empty() || grown.empty() || batch.front().x() >= grown.back().x();
    grown.insert(grown.end(), batch.begin(), batch.end());
    if (!inOrder || !std::is_sorted(grown.end() - qsizetype(batch.size()), grown.end(), byX))
        std::stable_sort(grown.begin(), grown.end(), byX);
}

std::vector<Series> SeriesTrack::data() {
    owned.reset();
    if (!isBand()) return {{name, points}};
    return {{name + QStringLiteral(" (mean)"), points},
            {name + QStringLiteral(" (min)"), lower},
            {name + QStringLiteral(" (max)"), upper}};
}

}  // namespace trainbench::ui
