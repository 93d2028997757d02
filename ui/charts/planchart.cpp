#include "ui/charts/planchart.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

#include "profiler/format/numberformat.h"
#include "ui/charts/axisformat.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/chartlabel.h"
#include "ui/charts/chartstyle.h"

namespace trainbench::ui {

namespace {

using chartstyle::kHoverRadius;

QString money(double usd) { return QString::fromStdString(profiler::formatMoney(usd)); }

}  // namespace

PlanChart::PlanChart(QWidget* parent) : ChartView(parent) {
    xAxis_ = new QValueAxis(this);
    yAxis_ = new QValueAxis(this);
    chart()->addAxis(xAxis_, Qt::AlignBottom);
    chart()->addAxis(yAxis_, Qt::AlignLeft);
    yAxis_->setTitleText(tr("cost to target (USD)"));
    // Back to front: the feasible corner, the limits, then the points.
    corner_ = new QAreaSeries(new QLineSeries(this), new QLineSeries(this));
    corner_->setName(tr("meets deadline and budget"));
    deadlineLine_ = new QLineSeries;
    budgetLine_ = new QLineSeries;
    measured_ = new QScatterSeries;
    measured_->setName(tr("measured"));
    emulated_ = new QScatterSeries;
    emulated_->setName(tr("emulated"));
    projected_ = new QScatterSeries;
    projected_->setName(tr("projected"));
    projected_->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    emulated_->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{corner_, deadlineLine_, budgetLine_, measured_,
                                                                      emulated_, projected_}) {
        chart()->addSeries(s);
        s->attachAxis(xAxis_);
        s->attachAxis(yAxis_);
    }
    note_ = new ChartLabel(chart());
    connect(chart(), &QChart::plotAreaChanged, this, &PlanChart::placeLabels);
    applyPalette();
    requestRedraw();
}

PlanChart::~PlanChart() = default;

void PlanChart::setPlan(std::vector<PlanChartPoint> points, std::optional<double> deadlineSeconds,
                        std::optional<double> budget, int notDrawn) {
    points_ = std::move(points);
    deadline_ = deadlineSeconds;
    budget_ = budget;
    notDrawn_ = notDrawn;
    requestRedraw();
}

bool PlanChart::deadlineDrawn() const { return deadlineLine_->isVisible() && deadlineLine_->count() == 2; }
bool PlanChart::budgetDrawn() const { return budgetLine_->isVisible() && budgetLine_->count() == 2; }

QRectF PlanChart::feasibleCorner() const {
    if (!deadline_ && !budget_) return {};
    return QRectF(0.0, 0.0, deadline_ ? *deadline_ : xMax_ / timeScale_, budget_ ? *budget_ : yMax_);
}

void PlanChart::redraw() {
    double maxSeconds = deadline_.value_or(0.0), maxCost = budget_.value_or(0.0);
    for (const PlanChartPoint& p : points_) {
        maxSeconds = std::max(maxSeconds, p.seconds);
        maxCost = std::max(maxCost, p.cost);
    }
    const axisformat::Unit unit = axisformat::secondsUnit(maxSeconds);
    timeScale_ = unit.scale;
    xMax_ = maxSeconds > 0 ? maxSeconds * timeScale_ * 1.15 : 1.0;
    yMax_ = maxCost > 0 ? maxCost * 1.15 : 1.0;
    const QRectF plot = chart()->plotArea();
    chartstyle::setTicks(xAxis_, 0.0, xMax_, plot.width() > 1 ? plot.width() : width() * 0.85, 90);
    chartstyle::setTicks(yAxis_, 0.0, yMax_, plot.height() > 1 ? plot.height() : height() * 0.7, 45);
    xAxis_->setTitleText(tr("time to target (%1)").arg(unit.suffix));

    for (QScatterSeries* s : {measured_, emulated_, projected_}) s->clear();
    for (const PlanChartPoint& p : points_) {
        QScatterSeries* s = p.source == QLatin1String("projected") ? projected_
                            : p.source == QLatin1String("emulated") ? emulated_ : measured_;
        s->append(p.seconds * timeScale_, p.cost);
    }
    const double dx = deadline_ ? *deadline_ * timeScale_ : xMax_;
    const double by = budget_ ? *budget_ : yMax_;
    deadlineLine_->clear();
    if (deadline_) deadlineLine_->append({QPointF(dx, 0.0), QPointF(dx, yMax_)});
    deadlineLine_->setName(deadline_ ? tr("deadline %1").arg(axisformat::seconds(*deadline_)) : tr("deadline"));
    deadlineLine_->setVisible(bool(deadline_));
    budgetLine_->clear();
    if (budget_) budgetLine_->append({QPointF(0.0, by), QPointF(xMax_, by)});
    budgetLine_->setName(budget_ ? tr("budget %1").arg(money(*budget_)) : tr("budget"));
    budgetLine_->setVisible(bool(budget_));
    corner_->upperSeries()->clear();
    corner_->lowerSeries()->clear();
    corner_->upperSeries()->append({QPointF(0.0, by), QPointF(dx, by)});
    corner_->lowerSeries()->append({QPointF(0.0, 0.0), QPointF(dx, 0.0)});
    corner_->setVisible(deadline_ || budget_);
    for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{deadlineLine_, budgetLine_, corner_})
        for (QLegendMarker* m : chart()->legend()->markers(s)) m->setVisible(s->isVisible());
    for (QScatterSeries* s : {measured_, emulated_, projected_})
        for (QLegendMarker* m : chart()->legend()->markers(s)) m->setVisible(s->count() > 0);
    // A legend first laid out while its page was hidden keeps labels cut to nothing (Qt 6.4) until
    // it is laid out again.
    chart()->legend()->hide();
    chart()->legend()->show();

    for (ChartLabel* l : labels_) delete l;
    labels_.clear();
    for (const PlanChartPoint& p : points_) {
        auto* label = new ChartLabel(chart());
        label->setText(p.label);
        labels_.push_back(label);
    }
    note_->setText(points_.empty() ? tr("No configuration with a time and a cost to the target")
                   : notDrawn_ == 1 ? tr("1 configuration without a time or a cost is not drawn")
                   : notDrawn_ > 1  ? tr("%1 configurations without a time or a cost are not drawn").arg(notDrawn_)
                                    : QString());
    restyle();
    placeLabels();
}

void PlanChart::restyle() {
    const bool d = dark();
    const QColor text = palette().color(QPalette::WindowText);
    const QColor window = palette().color(QPalette::Window);
    QScatterSeries* series[] = {measured_, emulated_, projected_};
    for (int i = 0; i < 3; ++i) {
        QScatterSeries* s = series[i];
        s->setColor(chartstyle::seriesColor(i, d));
        s->setBorderColor(window);
        s->setMarkerSize(11);
    }
    QColor green(46, 160, 67);
    QColor fill = green;
    fill.setAlpha(d ? 60 : 45);
    corner_->setBrush(fill);
    corner_->setPen(Qt::NoPen);
    QPen limit(text);
    limit.setStyle(Qt::DashLine);
    limit.setWidthF(1.5);
    deadlineLine_->setPen(limit);
    QPen budgetPen(QColor(d ? 0xe0a040 : 0xb06a00));
    budgetPen.setStyle(Qt::DashLine);
    budgetPen.setWidthF(1.5);
    budgetLine_->setPen(budgetPen);
    for (ChartLabel* l : labels_) {
        l->setBrush(text);
        l->setBackdrop(window);
    }
    note_->setBrush(text);
    note_->setBackdrop(window);
}

QPointF PlanChart::positionOf(const PlanChartPoint& p) const {
    return chart()->mapToPosition(QPointF(p.seconds * timeScale_, p.cost), measured_);
}

void PlanChart::placeLabels() {
    const QRectF plot = chart()->plotArea();
    std::vector<QRectF> taken;
    for (const PlanChartPoint& p : points_) taken.emplace_back(positionOf(p) - QPointF(7, 7), QSizeF(14, 14));
    for (size_t i = 0; i < labels_.size() && i < points_.size(); ++i) {
        const QPointF at = positionOf(points_[i]);
        const QSizeF size = labels_[i]->boundingRect().size();
        const double w = size.width(), h = size.height();
        // Right of the point first, then left, above, below; the first place nothing else holds.
        const QPointF offsets[] = {{9, -h / 2}, {-w - 9, -h / 2}, {-w / 2, -h - 8}, {-w / 2, 8}, {9, -h * 1.6}, {9, h * 0.6}};
        QRectF chosen;
        for (const QPointF& o : offsets) {
            QRectF box(at + o, size);
            box.moveLeft(std::clamp(box.left(), plot.left() + 2, std::max(plot.left() + 2, plot.right() - w - 2)));
            box.moveTop(std::clamp(box.top(), plot.top() + 2, std::max(plot.top() + 2, plot.bottom() - h - 2)));
            if (chosen.isNull()) chosen = box;
            if (std::none_of(taken.begin(), taken.end(), [&](const QRectF& t) { return t.intersects(box); })) {
                chosen = box;
                break;
            }
        }
        labels_[i]->setPos(chosen.topLeft());
        taken.push_back(chosen);
    }
    const QRectF n = note_->boundingRect();
    note_->setPos(points_.empty() ? plot.center() - QPointF(n.width() / 2, n.height() / 2)
                                  : QPointF(plot.right() - n.width() - 4, plot.top() + 4));
}

QString PlanChart::tooltipAt(const QPointF& pos) const {
    const QPointF at = toChart(pos);
    double best = kHoverRadius;
    QString text;
    for (const PlanChartPoint& p : points_) {
        const double d = QLineF(positionOf(p), at).length();
        if (d > best) continue;
        best = d;
        text = QStringLiteral("<b>%1</b> (%2)<br>time to target: %3<br>cost to target: %4%5")
                   .arg(p.label.toHtmlEscaped(), p.source, axisformat::seconds(p.seconds), money(p.cost),
                        p.meetsBoth ? tr("<br>meets the deadline and the budget") : QString());
    }
    return text;
}

QString PlanChart::csv() const {
    QString out = QStringLiteral("configuration,source,time_to_target_s,cost_to_target_usd,meets_both\n");
    for (const PlanChartPoint& p : points_)
        out += chartexport::field(p.label) + QLatin1Char(',') + p.source + QLatin1Char(',') + chartexport::number(p.seconds) +
               QLatin1Char(',') + chartexport::number(p.cost) + QLatin1Char(',') +
               (p.meetsBoth ? QStringLiteral("yes") : QStringLiteral("no")) + QLatin1Char('\n');
    return out;
}

}  // namespace trainbench::ui
