#include "ui/charts/breakdownchart.h"

#include "ui/charts/chartexport.h"
#include "ui/charts/chartstyle.h"
#include "ui/charts/plotmapping.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <numeric>

namespace trainbench::ui {
namespace {

constexpr double kPixelsPerWindow = 6.0;  // narrower windows turn the stack into noise

}  // namespace

BreakdownChart::BreakdownChart(QWidget* parent) : ChartView(parent) {
    xAxis_ = new QValueAxis(this);
    xAxis_->setTitleText(QStringLiteral("step"));
    yAxis_ = new QValueAxis(this);
    chart()->addAxis(xAxis_, Qt::AlignBottom);
    chart()->addAxis(yAxis_, Qt::AlignLeft);
    enableXZoom(xAxis_);
    applyPalette();
}

void BreakdownChart::setTitle(const QString& title) { chart()->setTitle(title); }

void BreakdownChart::setData(BreakdownDataPtr snapshot) {
    std::vector<size_t> shown;
    if (snapshot) {
        for (size_t c = 0; c < snapshot->categories.size(); ++c) {
            const auto& s = snapshot->categories[c].seconds;
            if (std::any_of(s.begin(), s.end(), [](double v) { return v > 0; })) shown.push_back(c);
        }
    }
    const bool sameCategories = data_ && snapshot && shown == shown_ &&
                                std::equal(shown.begin(), shown.end(), shown_.begin(), [&](size_t a, size_t b) {
                                    return snapshot->categories[a].name == data_->categories[b].name;
                                });
    data_ = std::move(snapshot);
    if (!sameCategories) {
        shown_ = std::move(shown);
        rebuildAreas();
    }
    requestRedraw();
}

void BreakdownChart::rebuildAreas() {
    setAxesQuietly([this] { replaceAreas(); });  // Qt Charts re-ranges axes on attach
    restyle();
}

void BreakdownChart::replaceAreas() {
    for (QAreaSeries* a : areas_) {
        chart()->removeSeries(a);
        delete a;
    }
    areas_.clear();
    for (size_t c : shown_) {
        auto* upper = new QLineSeries;
        auto* lower = new QLineSeries;
        auto* area = new QAreaSeries(upper, lower);
        upper->setParent(area);
        lower->setParent(area);
        area->setName(data_->categories[c].name);
        chart()->addSeries(area);
        area->attachAxis(xAxis_);
        area->attachAxis(yAxis_);
        areas_.push_back(area);
    }
}

QStringList BreakdownChart::shownCategories() const {
    QStringList names;
    for (size_t c : shown_) names << data_->categories[c].name;
    return names;
}

QAreaSeries* BreakdownChart::area(const QString& category) const {
    for (QAreaSeries* a : areas_)
        if (a->name() == category) return a;
    return nullptr;
}

QPair<double, double> BreakdownChart::dataXRange() const {
    if (!data_ || data_->steps.empty()) return {0.0, 1.0};
    const auto& s = data_->steps;
    const double spacing = s.size() > 1 ? (s.back() - s.front()) / double(s.size() - 1) : 1.0;
    return {s.front(), s.back() + spacing};
}

void BreakdownChart::redraw() {
    const auto [x0, x1] = xRange();
    const QRectF plot = chart()->plotArea();
    const double plotWidth = plot.width() > 1 ? plot.width() : width() * 0.85;
    windows_ = data_ ? windowMeans(*data_, x0, x1, std::max(1, int(plotWidth / kPixelsPerWindow)))
                     : std::vector<BreakdownWindow>();
    double maxTotal = 0.0;
    for (const BreakdownWindow& w : windows_) {
        double sum = 0.0;
        for (size_t c : shown_) sum += w.means[c];
        maxTotal = std::max(maxTotal, sum);
    }
    unit_ = axisformat::secondsUnit(maxTotal);
    yAxis_->setTitleText(QStringLiteral("time per step (%1)").arg(unit_.suffix));
    // Each window is a flat run from its first step to the next window's: a stacked histogram.
    std::vector<double> base(windows_.size(), 0.0);
    for (size_t k = 0; k < areas_.size(); ++k) {
        QList<QPointF> lower, upper;
        lower.reserve(qsizetype(windows_.size()) * 2);
        upper.reserve(qsizetype(windows_.size()) * 2);
        for (size_t w = 0; w < windows_.size(); ++w) {
            const double b = base[w] * unit_.scale;
            base[w] += windows_[w].means[shown_[k]];
            const double t = base[w] * unit_.scale;
            lower << QPointF(windows_[w].xBegin, b) << QPointF(windows_[w].xEnd, b);
            upper << QPointF(windows_[w].xBegin, t) << QPointF(windows_[w].xEnd, t);
        }
        areas_[k]->lowerSeries()->replace(lower);
        areas_[k]->upperSeries()->replace(upper);
    }
    const double top = maxTotal > 0 ? maxTotal * unit_.scale * 1.08 : 1.0;
    setAxesQuietly([&] {
        chartstyle::setTicks(xAxis_, x0, x1, plotWidth, kXTickPixels);
        chartstyle::setTicks(yAxis_, 0.0, top, plot.height() > 1 ? plot.height() : height() * 0.7, 45);
    });
}

void BreakdownChart::restyle() {
    for (size_t k = 0; k < areas_.size(); ++k) {
        const QColor color = chartstyle::categoryColor(areas_[k]->name(), int(k), dark());
        areas_[k]->setBrush(color);
        // A thin line in the window colour keeps neighbouring bands apart.
        QPen edge(palette().color(QPalette::Window));
        edge.setWidthF(0.6);
        areas_[k]->setPen(edge);
    }
}

QString BreakdownChart::tooltipAt(const QPointF& pos) const {
    const QPointF at = toChart(pos);
    const QRectF plot = chart()->plotArea();
    if (!plot.contains(at) || windows_.empty() || !data_) return {};
    const PlotMapping m{plot, xAxis_->min(), xAxis_->max(), yAxis_->min(), yAxis_->max(), false};
    const double x = m.xAt(at.x());
    const double y = (yAxis_->min() + (plot.bottom() - at.y()) / plot.height() * (yAxis_->max() - yAxis_->min())) /
                     unit_.scale;
    const auto it = std::upper_bound(windows_.begin(), windows_.end(), x,
                                     [](double v, const BreakdownWindow& w) { return v < w.xBegin; });
    if (it == windows_.begin()) return {};
    const BreakdownWindow& w = *(it - 1);
    if (x > w.xEnd) return {};
    double total = 0.0;
    for (size_t c : shown_) total += w.means[c];
    double below = 0.0;
    for (size_t c : shown_) {
        const double v = w.means[c];
        if (y >= below && y < below + v) {
            const QString steps = w.steps == 1 ? QStringLiteral("step %1").arg(axisformat::value(w.firstStep))
                                               : QStringLiteral("steps %1–%2 (mean of %3)")
                                                     .arg(axisformat::value(w.firstStep),
                                                          axisformat::value(w.lastStep))
                                                     .arg(w.steps);
            return QStringLiteral("<b>%1</b><br>%2<br>%3 per step (%4 % of %5)")
                .arg(data_->categories[c].name.toHtmlEscaped(), steps, axisformat::seconds(v),
                     QString::number(total > 0 ? 100.0 * v / total : 0.0, 'f', 1), axisformat::seconds(total));
        }
        below += v;
    }
    return {};
}

QString BreakdownChart::csv() const {
    QString out = QStringLiteral("step");
    if (!data_) return out + QLatin1Char('\n');
    for (const BreakdownCategory& c : data_->categories) out += QLatin1Char(',') + chartexport::field(c.name + " (s)");
    out += QLatin1Char('\n');
    for (size_t i = 0; i < data_->steps.size(); ++i) {
        out += chartexport::number(data_->steps[i]);
        for (const BreakdownCategory& c : data_->categories) {
            out += QLatin1Char(',');
            if (i < c.seconds.size()) out += chartexport::number(c.seconds[i]);
        }
        out += QLatin1Char('\n');
    }
    return out;
}

}  // namespace trainbench::ui
