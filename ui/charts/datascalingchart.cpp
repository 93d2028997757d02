#include "ui/charts/datascalingchart.h"

#include "ui/charts/axisformat.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/chartstyle.h"

#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainbench::ui {
namespace {

using chartstyle::kHoverRadius;
constexpr double kCapOctaves = 0.06;  // half the width of a spread bar's caps, in octaves of x
constexpr int kFitPoints = 32;        // the power law is a curve on a log x and linear y axis

QString fractionText(const std::optional<double>& f) {
    return f ? QStringLiteral(" (data.fraction %1)").arg(QString::number(*f, 'g', 6)) : QString();
}

}  // namespace

struct DataScalingChart::Curve {
    int colorIndex = 0;
    QLineSeries* mean = nullptr;
    QScatterSeries* markers = nullptr;
    QLineSeries* fit = nullptr;           // null without a fit
    std::vector<QLineSeries*> bars;        // one per point with several runs
};

DataScalingChart::DataScalingChart(QWidget* parent) : ChartView(parent) {
    xAxis_ = new QLogValueAxis(this);
    xAxis_->setBase(2.0);
    xAxis_->setLabelFormat(QStringLiteral("%.0f"));
    xAxis_->setMinorTickCount(0);
    xAxis_->setTitleText(QStringLiteral("training examples (log scale)"));
    yAxis_ = new QValueAxis(this);
    chart()->addAxis(xAxis_, Qt::AlignBottom);
    chart()->addAxis(yAxis_, Qt::AlignLeft);
    emptyNote_ = new ChartLabel(chart());
    emptyNote_->setVisible(false);
    chart()->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);  // dashed fit vs solid means
    connect(chart(), &QChart::plotAreaChanged, this, [this] {
        const QRectF note = emptyNote_->boundingRect();
        emptyNote_->setPos(chart()->plotArea().center() - QPointF(note.width() / 2, note.height() / 2));
    });
    applyPalette();
    requestRedraw();
}

DataScalingChart::~DataScalingChart() = default;

void DataScalingChart::setTitle(const QString& title) { chart()->setTitle(title); }

void DataScalingChart::setScaling(const profiler::DataScaling& scaling) {
    data_ = scaling;
    requestRedraw();
}

QStringList DataScalingChart::fitTexts() const {
    QStringList out;
    for (const profiler::DataScalingCurve& c : data_.curves)
        out << QString::fromStdString(c.label) + QStringLiteral(": ") +
                   (c.fit ? QString::fromStdString(profiler::describeFit(*c.fit, data_.metric))
                          : QStringLiteral("too few sizes for a power law (three are needed)"));
    return out;
}

void DataScalingChart::clearCurves() {
    for (Curve& c : curves_) {
        std::vector<QAbstractSeries*> all{c.mean, c.markers, c.fit};
        all.insert(all.end(), c.bars.begin(), c.bars.end());
        for (QAbstractSeries* s : all) {
            if (!s) continue;
            chart()->removeSeries(s);
            delete s;
        }
    }
    curves_.clear();
}

void DataScalingChart::redraw() {
    clearCurves();
    const double scale = percent() ? 100.0 : 1.0;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    double xMin = lo, xMax = -lo;
    for (size_t i = 0; i < data_.curves.size(); ++i) {
        const profiler::DataScalingCurve& dc = data_.curves[i];
        Curve c;
        c.colorIndex = static_cast<int>(i);
        c.mean = new QLineSeries;
        c.mean->setName(QString::fromStdString(dc.label));
        c.markers = new QScatterSeries;
        for (const profiler::DataScalingPoint& p : dc.points) {
            const double x = static_cast<double>(p.examples);
            c.mean->append(x, p.mean * scale);
            c.markers->append(x, p.mean * scale);
            lo = std::min(lo, p.min * scale);
            hi = std::max(hi, p.max * scale);
            xMin = std::min(xMin, x);
            xMax = std::max(xMax, x);
            if (p.runs.size() < 2 || p.max <= p.min) continue;
            // Cap, bar, cap as one polyline: the caps' middles retrace the bar's ends.
            auto* bar = new QLineSeries;
            const double left = x * std::exp2(-kCapOctaves), right = x * std::exp2(kCapOctaves);
            bar->append({{left, p.min * scale}, {right, p.min * scale}, {x, p.min * scale}, {x, p.max * scale},
                         {left, p.max * scale}, {right, p.max * scale}});
            c.bars.push_back(bar);
        }
        if (dc.fit) {
            c.fit = new QLineSeries;
            c.fit->setName(QString::fromStdString(dc.label) +
                           QStringLiteral(": power law, slope %1").arg(QString::number(dc.fit->slope, 'f', 3)));
            const double a = std::log2(static_cast<double>(dc.points.front().examples));
            const double b = std::log2(static_cast<double>(dc.points.back().examples));
            for (int k = 0; k <= kFitPoints; ++k) {
                const double x = std::exp2(a + (b - a) * k / kFitPoints);
                const double y = dc.fit->at(x) * scale;
                c.fit->append(x, y);
                lo = std::min(lo, y);
                hi = std::max(hi, y);
            }
        }
        std::vector<QAbstractSeries*> all{c.mean, c.fit, c.markers};
        all.insert(all.end(), c.bars.begin(), c.bars.end());
        for (QAbstractSeries* s : all) {
            if (!s) continue;
            chart()->addSeries(s);
            s->attachAxis(xAxis_);
            s->attachAxis(yAxis_);
        }
        for (QAbstractSeries* s : std::vector<QAbstractSeries*>(all.begin() + 2, all.end()))
            for (QLegendMarker* m : chart()->legend()->markers(s)) m->setVisible(false);
        curves_.push_back(c);
    }
    if (curves_.empty()) {
        lo = 0.0, hi = 1.0, xMin = 1024.0, xMax = 65536.0;
    }
    // Whole powers of the base at both ends, a little room around the outer points; base 10 when
    // powers of two would be too many ticks to label.
    const double octaves = std::log2(xMax) - std::log2(xMin);
    const double base = octaves > 10 ? 10.0 : 2.0;
    const double lb = std::log(base);
    xAxis_->setBase(base);
    xAxis_->setRange(std::pow(base, std::floor(std::log(xMin) / lb - 0.1)), std::pow(base, std::ceil(std::log(xMax) / lb + 0.1)));
    const double pad = std::max((hi - lo) * 0.12, std::fabs(hi) * 0.02 + 1e-9);
    const double plot = chart()->plotArea().height() > 1 ? chart()->plotArea().height() : height() * 0.7;
    chartstyle::setTicks(yAxis_, std::max(0.0, lo - pad), hi + pad, plot, 45);
    yAxis_->setTitleText(percent() ? QStringLiteral("test error (%)") : QStringLiteral("test loss"));

    emptyNote_->setVisible(curves_.empty());
    emptyNote_->setText(QStringLiteral("No runs of one experiment at two training-set sizes or more"));
    restyle();
}

void DataScalingChart::restyle() {
    for (Curve& c : curves_) {
        const QColor color = chartstyle::seriesColor(c.colorIndex, dark());
        QPen line(color);
        line.setWidthF(2.0);
        c.mean->setPen(line);
        c.markers->setColor(color);
        c.markers->setBorderColor(palette().color(QPalette::Window));
        c.markers->setMarkerSize(9);
        QPen bar(color);
        bar.setWidthF(1.4);
        for (QLineSeries* b : c.bars) b->setPen(bar);
        if (c.fit) {
            QPen fit(color.lighter(dark() ? 80 : 130));
            fit.setStyle(Qt::DashLine);
            fit.setWidthF(1.4);
            c.fit->setPen(fit);
        }
    }
    emptyNote_->setBrush(palette().color(QPalette::WindowText));
}

QString DataScalingChart::tooltipAt(const QPointF& pos) const {
    const QPointF at = toChart(pos);
    const double scale = percent() ? 100.0 : 1.0;
    auto value = [&](double v) {
        return percent() ? QString::number(100.0 * v, 'f', 2) + QStringLiteral(" %") : QString::number(v, 'g', 4);
    };
    double best = kHoverRadius;
    QString text;
    for (size_t i = 0; i < curves_.size() && i < data_.curves.size(); ++i) {
        const profiler::DataScalingCurve& dc = data_.curves[i];
        for (const profiler::DataScalingPoint& p : dc.points) {
            const QPointF q = chart()->mapToPosition(QPointF(static_cast<double>(p.examples), p.mean * scale), curves_[i].mean);
            const double d = QLineF(q, at).length();
            if (d > best) continue;
            best = d;
            text = QStringLiteral("<b>%1</b><br>%2 training examples%3<br>%4: %5")
                       .arg(QString::fromStdString(dc.label).toHtmlEscaped(), QString::number(p.examples),
                            fractionText(p.fraction), QString::fromUtf8(profiler::metricName(data_.metric)), value(p.mean));
            if (p.runs.size() > 1)
                text += QStringLiteral("<br>mean of %1 runs, %2 to %3").arg(p.runs.size()).arg(value(p.min), value(p.max));
            QStringList ids;
            for (int64_t id : p.runs) ids << QStringLiteral("#%1").arg(id);
            text += QStringLiteral("<br>run%1 %2").arg(p.runs.size() > 1 ? QStringLiteral("s") : QString(),
                                                         ids.join(QStringLiteral(", ")));
        }
        if (!text.isEmpty() || !curves_[i].fit) continue;
        for (const QPointF& f : curves_[i].fit->points()) {
            if (QLineF(chart()->mapToPosition(f, curves_[i].fit), at).length() <= kHoverRadius / 2) {
                text = QString::fromStdString(dc.label).toHtmlEscaped() + QStringLiteral("<br>") +
                       QString::fromStdString(profiler::describeFit(*dc.fit, data_.metric)).toHtmlEscaped();
                break;
            }
        }
    }
    return text;
}

QString DataScalingChart::csv() const {
    QString out = QStringLiteral("series,examples,fraction,runs,%1_mean,%1_min,%1_max,fit_slope,fit_coefficient,fit_r2\n")
                      .arg(percent() ? QStringLiteral("test_error") : QStringLiteral("test_loss"));
    for (const profiler::DataScalingCurve& c : data_.curves)
        for (const profiler::DataScalingPoint& p : c.points) {
            auto fit = [&](double v) { return c.fit ? chartexport::number(v) : QString(); };
            out += chartexport::field(QString::fromStdString(c.label)) + QLatin1Char(',') + QString::number(p.examples) +
                   QLatin1Char(',') + (p.fraction ? chartexport::number(*p.fraction) : QString()) + QLatin1Char(',') +
                   QString::number(p.runs.size()) + QLatin1Char(',') + chartexport::number(p.mean) + QLatin1Char(',') +
                   chartexport::number(p.min) + QLatin1Char(',') + chartexport::number(p.max) + QLatin1Char(',') +
                   fit(c.fit ? c.fit->slope : 0) + QLatin1Char(',') + fit(c.fit ? c.fit->coefficient : 0) +
                   QLatin1Char(',') + fit(c.fit ? c.fit->r2 : 0) + QLatin1Char('\n');
        }
    return out;
}

}  // namespace trainbench::ui
