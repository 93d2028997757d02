#include "ui/charts/scalingchart.h"

#include "ui/charts/axisformat.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/chartstyle.h"

#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace trainbench::ui {
namespace {

using chartstyle::kHoverRadius;

QString percent(double fraction) { return QString::number(100.0 * fraction, 'f', fraction < 0.995 ? 1 : 0) + " %"; }

}  // namespace

struct ScalingChart::Curve {
    QString name;
    int colorIndex = 0;
    QLineSeries* measured = nullptr;
    QScatterSeries* markers = nullptr;
    QLineSeries* ideal = nullptr;
    std::vector<ScalingRow> rows;  // copies of the rows drawn (time mode: those with a time)
};

ScalingChart::ScalingChart(QWidget* parent) : ChartView(parent) {
    xAxis_ = new QValueAxis(this);
    yAxis_ = new QValueAxis(this);
    chart()->addAxis(xAxis_, Qt::AlignBottom);
    chart()->addAxis(yAxis_, Qt::AlignLeft);
    emptyNote_ = new ChartLabel(chart());
    emptyNote_->setVisible(false);
    chart()->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);  // dashed ideal vs solid
    connect(chart(), &QChart::plotAreaChanged, this, &ScalingChart::placeLabels);
    applyPalette();
    requestRedraw();
}

ScalingChart::~ScalingChart() = default;

void ScalingChart::setTitle(const QString& title) { chart()->setTitle(title); }

void ScalingChart::setPoints(const std::vector<ScalingPoint>& points) {
    rows_ = scalingRows(points);
    requestRedraw();
}

void ScalingChart::setMode(Mode mode) {
    mode_ = mode;
    requestRedraw();
}

void ScalingChart::setThroughputUnit(const QString& unit) {
    unit_ = unit;
    requestRedraw();
}

void ScalingChart::setDeviceNoun(const QString& plural) {
    deviceNoun_ = plural;
    requestRedraw();
}

void ScalingChart::rebuild() {
    for (Curve& c : curves_) {
        for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{c.measured, c.markers, c.ideal}) {
            chart()->removeSeries(s);
            delete s;
        }
    }
    curves_.clear();
    for (ChartLabel* label : labels_) delete label;
    labels_.clear();
    labelCurves_.clear();

    const bool time = mode_ == Mode::TimeToTarget;
    for (const ScalingRow& r : rows_) {
        if (time && !r.timeToTarget) continue;
        auto it = std::find_if(curves_.begin(), curves_.end(), [&](const Curve& c) { return c.name == r.series; });
        if (it == curves_.end()) {
            Curve c;
            c.name = r.series;
            c.colorIndex = int(curves_.size());
            curves_.push_back(c);
            it = curves_.end() - 1;
        }
        it->rows.push_back(r);
    }
    const bool several = curves_.size() > 1;
    for (Curve& c : curves_) {
        const QString what = time ? QStringLiteral("time to target") : QStringLiteral("throughput");
        c.measured = new QLineSeries;
        c.measured->setName(several ? c.name : what);
        c.markers = new QScatterSeries;
        c.ideal = new QLineSeries;
        c.ideal->setName(several ? c.name + QStringLiteral(": ideal") : QStringLiteral("ideal (linear scaling)"));
        for (const ScalingRow& row : c.rows) {
            const double y = time ? *row.timeToTarget * timeScale_ : row.throughput;
            c.measured->append(row.devices, y);
            c.markers->append(row.devices, y);
            if (time ? bool(row.idealTime) : true) c.ideal->append(row.devices, time ? *row.idealTime * timeScale_ : row.ideal);
        }
        for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{c.measured, c.ideal, c.markers}) {
            chart()->addSeries(s);
            s->attachAxis(xAxis_);
            s->attachAxis(yAxis_);
        }
        for (QLegendMarker* m : chart()->legend()->markers(c.markers)) m->setVisible(false);
        for (const ScalingRow& row : c.rows) {
            auto* label = new ChartLabel(chart());
            const auto eff = time ? row.timeEfficiency : std::optional<double>(row.efficiency);
            label->setText(eff ? percent(*eff) : QString());
            labels_.push_back(label);
            labelCurves_.push_back(c.colorIndex);
        }
    }
}

void ScalingChart::redraw() {
    const bool time = mode_ == Mode::TimeToTarget;
    double maxTime = 0.0;
    for (const ScalingRow& r : rows_) {
        if (r.timeToTarget) maxTime = std::max(maxTime, *r.timeToTarget);
        if (r.idealTime) maxTime = std::max(maxTime, *r.idealTime);
    }
    const axisformat::Unit timeUnit = axisformat::secondsUnit(maxTime);
    timeScale_ = timeUnit.scale;
    rebuild();

    int maxDevices = 1;
    double maxY = 0.0;
    for (const Curve& c : curves_)
        for (const ScalingRow& row : c.rows) {
            maxDevices = std::max(maxDevices, row.devices);
            maxY = std::max(maxY, time ? std::max(*row.timeToTarget, row.idealTime.value_or(0.0)) * timeScale_
                                       : std::max(row.throughput, row.ideal));
        }
    const QRectF plot = chart()->plotArea();
    const double w = plot.width() > 1 ? plot.width() : width() * 0.85;
    // Whole device counts only; room on the right for the last point's label.
    const double step = std::max(1.0, axisformat::niceStep(maxDevices / std::max(2.0, w / 70)));
    xAxis_->setRange(0.0, maxDevices + std::max(0.5, maxDevices * 0.06));
    xAxis_->setTickType(QValueAxis::TicksDynamic);
    xAxis_->setTickAnchor(0.0);
    xAxis_->setTickInterval(step);
    xAxis_->setLabelFormat(QStringLiteral("%.0f"));
    xAxis_->setTitleText(deviceNoun_);
    chartstyle::setTicks(yAxis_, 0.0, maxY > 0 ? maxY * 1.15 : 1.0, plot.height() > 1 ? plot.height() : height() * 0.7, 45);
    yAxis_->setTitleText(time ? QStringLiteral("time to target (%1)").arg(timeUnit.suffix) : unit_);

    emptyNote_->setVisible(curves_.empty());
    emptyNote_->setText(time ? QStringLiteral("No run reached the accuracy target")
                             : QStringLiteral("No scaling runs to show"));
    restyle();
    placeLabels();
}

void ScalingChart::restyle() {
    const QColor text = palette().color(QPalette::WindowText);
    for (Curve& c : curves_) {
        const QColor color = chartstyle::seriesColor(c.colorIndex, dark());
        QPen line(color);
        line.setWidthF(2.0);
        c.measured->setPen(line);
        c.markers->setColor(color);
        c.markers->setBorderColor(palette().color(QPalette::Window));
        c.markers->setMarkerSize(9);
        QPen ideal(color.lighter(dark() ? 80 : 130));
        ideal.setStyle(Qt::DashLine);
        ideal.setWidthF(1.4);
        c.ideal->setPen(ideal);
    }
    // One curve: labels in the text colour; several: in their curve's colour.
    for (size_t i = 0; i < labels_.size(); ++i) {
        labels_[i]->setBrush(curves_.size() > 1 ? chartstyle::seriesColor(labelCurves_[i], dark()) : text);
        labels_[i]->setBackdrop(palette().color(QPalette::Window));
    }
    emptyNote_->setBrush(text);
}

void ScalingChart::placeLabels() {
    const QRectF plot = chart()->plotArea();
    const bool time = mode_ == Mode::TimeToTarget;
    // Every point's marker, so no label covers one.
    std::vector<QRectF> taken;
    for (const Curve& c : curves_) {
        if (!c.measured) return;  // called by a layout change in the middle of rebuild()
        for (const ScalingRow& row : c.rows) {
            const double y = time ? *row.timeToTarget * timeScale_ : row.throughput;
            const QPointF at = chart()->mapToPosition(QPointF(row.devices, y), c.measured);
            taken.emplace_back(at - QPointF(6, 6), QSizeF(12, 12));
        }
    }
    size_t i = 0;
    for (const Curve& c : curves_) {
        for (const ScalingRow& row : c.rows) {
            if (i >= labels_.size()) return;
            ChartLabel* label = labels_[i++];
            const double y = time ? *row.timeToTarget * timeScale_ : row.throughput;
            const QPointF at = chart()->mapToPosition(QPointF(row.devices, y), c.measured);
            const QSizeF size = label->boundingRect().size();
            // Off the ideal line first: below a point under it (throughput), above otherwise;
            // then the other side, the right, the left, and further out, until one is free.
            const bool below = !time && row.efficiency < 0.97;
            const double w = size.width(), h = size.height();
            const QPointF near[] = {{-w / 2, below ? 7 : -h - 7}, {-w / 2, below ? -h - 7 : 7}, {9, -h / 2},
                                    {-w - 9, -h / 2}, {-w / 2, below ? h + 9 : -2 * h - 9}, {-w / 2, below ? -2 * h - 9 : h + 9}};
            QRectF chosen;
            for (const QPointF& offset : near) {
                QRectF box(at + offset, size);
                box.moveLeft(std::clamp(box.left(), plot.left() + 2, plot.right() - w - 2));
                box.moveTop(std::clamp(box.top(), plot.top() + 2, plot.bottom() - h - 2));
                if (chosen.isNull()) chosen = box;
                if (std::none_of(taken.begin(), taken.end(), [&](const QRectF& t) { return t.intersects(box); })) {
                    chosen = box;
                    break;
                }
            }
            label->setPos(chosen.topLeft());
            taken.push_back(chosen);
        }
    }
    const QRectF note = emptyNote_->boundingRect();
    emptyNote_->setPos(plot.center() - QPointF(note.width() / 2, note.height() / 2));
}

QString ScalingChart::rowTooltip(const ScalingRow& r, bool ideal) const {
    QString text = QStringLiteral("<b>%1</b>%2 %3 %4<br>")
                       .arg(r.series.isEmpty() ? QString() : r.series.toHtmlEscaped(),
                            r.series.isEmpty() ? QString() : QStringLiteral(" ·"), QString::number(r.devices), deviceNoun_);
    if (ideal) {
        if (mode_ == Mode::TimeToTarget)
            return text + QStringLiteral("ideal time to target: %1").arg(axisformat::seconds(r.idealTime.value_or(0.0)));
        return text + QStringLiteral("ideal (linear) throughput: %1 %2").arg(axisformat::value(std::round(r.ideal)), unit_);
    }
    text += QStringLiteral("throughput: %1 %2 (ideal %3)<br>scaling efficiency: %4")
                .arg(axisformat::value(std::round(r.throughput)), unit_, axisformat::value(std::round(r.ideal)),
                     percent(r.efficiency));
    if (r.timeToTarget)
        text += QStringLiteral("<br>time to target: %1").arg(axisformat::seconds(*r.timeToTarget)) +
                (r.timeEfficiency ? QStringLiteral(" (efficiency %1)").arg(percent(*r.timeEfficiency)) : QString());
    if (r.runs > 1) text += QStringLiteral("<br>mean of %1 runs").arg(r.runs);
    if (!r.labels.isEmpty()) text += QStringLiteral("<br>") + r.labels.join(QStringLiteral(", ")).toHtmlEscaped();
    return text;
}

QString ScalingChart::tooltipAt(const QPointF& pos) const {
    const QPointF at = toChart(pos);
    const bool time = mode_ == Mode::TimeToTarget;
    double best = kHoverRadius;
    QString text;
    for (const Curve& c : curves_) {
        for (const ScalingRow& row : c.rows) {
            const double y = time ? *row.timeToTarget * timeScale_ : row.throughput;
            const std::optional<double> idealY = time ? (row.idealTime ? std::optional<double>(*row.idealTime * timeScale_)
                                                                     : std::nullopt)
                                                      : std::optional<double>(row.ideal);
            const QPointF p = chart()->mapToPosition(QPointF(row.devices, y), c.measured);
            // The measured point first: where it sits on the ideal line (the base), it wins.
            if (const double d = QLineF(p, at).length(); d <= best) {
                best = d - 0.01;
                text = rowTooltip(row, false);
            }
            if (idealY) {
                const QPointF q = chart()->mapToPosition(QPointF(row.devices, *idealY), c.ideal);
                if (const double d = QLineF(q, at).length(); d < best) {
                    best = d;
                    text = rowTooltip(row, true);
                }
            }
        }
    }
    return text;
}

QStringList ScalingChart::pointLabels() const {
    QStringList out;
    for (const ChartLabel* label : labels_) out << label->text();
    return out;
}

QString ScalingChart::csv() const {
    QString out = QStringLiteral("series,%1,throughput,ideal_throughput,efficiency,time_to_target_s,ideal_time_s,"
                                 "time_efficiency,runs,labels\n")
                      .arg(deviceNoun_);
    auto opt = [](const std::optional<double>& v) { return v ? chartexport::number(*v) : QString(); };
    for (const ScalingRow& r : rows_) {
        out += chartexport::field(r.series) + QLatin1Char(',') + QString::number(r.devices) + QLatin1Char(',') +
               chartexport::number(r.throughput) + QLatin1Char(',') + chartexport::number(r.ideal) + QLatin1Char(',') +
               chartexport::number(r.efficiency) + QLatin1Char(',') + opt(r.timeToTarget) + QLatin1Char(',') +
               opt(r.idealTime) + QLatin1Char(',') + opt(r.timeEfficiency) + QLatin1Char(',') +
               QString::number(r.runs) + QLatin1Char(',') + chartexport::field(r.labels.join(QLatin1Char(';'))) +
               QLatin1Char('\n');
    }
    return out;
}

}  // namespace trainbench::ui
