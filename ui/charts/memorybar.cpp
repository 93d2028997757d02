#include "ui/charts/memorybar.h"

#include "ui/charts/axisformat.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/chartstyle.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace trainbench::ui {
namespace {

const QString kEstimate = QStringLiteral("estimate");
const QString kPeak = QStringLiteral("peak RSS");
constexpr double kBarWidth = 0.6;

}  // namespace

MemoryBar::MemoryBar(QWidget* parent) : ChartView(parent) {
    bars_ = new QHorizontalStackedBarSeries(this);
    bars_->setBarWidth(kBarWidth);
    limitLine_ = new QLineSeries(this);
    limitLine_->setName(QStringLiteral("device limit"));
    valueAxis_ = new QValueAxis(this);
    categoryAxis_ = new QBarCategoryAxis(this);
    rowAxis_ = new QValueAxis(this);
    rowAxis_->setVisible(false);
    chart()->addSeries(bars_);
    chart()->addSeries(limitLine_);
    chart()->addAxis(valueAxis_, Qt::AlignBottom);
    chart()->addAxis(categoryAxis_, Qt::AlignLeft);
    chart()->addAxis(rowAxis_, Qt::AlignRight);
    bars_->attachAxis(valueAxis_);
    bars_->attachAxis(categoryAxis_);
    limitLine_->attachAxis(valueAxis_);
    limitLine_->attachAxis(rowAxis_);
    limitLabel_ = new ChartLabel(chart());
    connect(chart(), &QChart::plotAreaChanged, this, &MemoryBar::placeLabels);
    applyPalette();
    requestRedraw();
}

void MemoryBar::setTitle(const QString& title) { chart()->setTitle(title); }

void MemoryBar::setFootprint(const MemoryFootprint& footprint) {
    footprint_ = footprint;
    requestRedraw();
}

int64_t MemoryBar::estimateBytes() const {
    int64_t sum = 0;
    for (const MemoryPart& p : footprint_.parts) sum += std::max<int64_t>(p.bytes, 0);
    return sum;
}

QString MemoryBar::shareOfLimit(double bytes) const {
    if (!footprint_.limitBytes || *footprint_.limitBytes <= 0) return {};
    return QStringLiteral("%1 % of the device").arg(QString::number(100.0 * bytes / double(*footprint_.limitBytes), 'f', 0));
}

void MemoryBar::redraw() {
    bars_->clear();  // deletes the sets
    sets_.clear();
    for (ChartLabel* t : totals_) delete t;
    totals_.clear();

    const int64_t estimate = estimateBytes();
    const double peak = double(footprint_.peakRssBytes.value_or(0));
    const double limit = double(footprint_.limitBytes.value_or(0));
    const axisformat::Unit unit = axisformat::bytesUnit(std::max({double(estimate), peak, limit}));
    scale_ = unit.scale;

    // Qt Charts stacks horizontal categories bottom-up: the estimate goes on top.
    categories_.clear();
    if (footprint_.peakRssBytes) categories_ << kPeak;
    categories_ << kEstimate;
    const int estimateRow = int(categories_.indexOf(kEstimate));
    for (const MemoryPart& p : footprint_.parts) {
        auto* set = new QBarSet(p.name);
        for (int row = 0; row < categories_.size(); ++row) *set << (row == estimateRow ? double(p.bytes) * scale_ : 0.0);
        sets_.push_back(set);
    }
    if (footprint_.peakRssBytes) {
        auto* set = new QBarSet(QStringLiteral("peak RSS (measured)"));
        for (int row = 0; row < categories_.size(); ++row) *set << (categories_[row] == kPeak ? peak * scale_ : 0.0);
        sets_.push_back(set);
    }
    for (QBarSet* set : sets_) bars_->append(set);
    categoryAxis_->clear();
    categoryAxis_->append(categories_);
    rowAxis_->setRange(-0.5, categories_.size() - 0.5);

    limitLine_->clear();
    if (limit > 0) limitLine_->append({QPointF(limit * scale_, -0.5), QPointF(limit * scale_, categories_.size() - 0.5)});
    limitLine_->setVisible(limit > 0);
    const QString device = footprint_.deviceName.isEmpty() ? QStringLiteral("device") : footprint_.deviceName;
    limitLabel_->setText(limit > 0 ? QStringLiteral("%1: %2").arg(device, axisformat::bytes(limit)) : QString());

    for (int row = 0; row < categories_.size(); ++row) {
        const double bytes = categories_[row] == kPeak ? peak : double(estimate);
        auto* total = new ChartLabel(chart());
        const QString share = shareOfLimit(bytes);
        total->setText(axisformat::bytes(bytes) + (share.isEmpty() ? QString() : QStringLiteral(" · ") + share));
        totals_.push_back(total);
    }
    const QRectF plot = chart()->plotArea();
    const double plotWidth = plot.width() > 1 ? plot.width() : width() * 0.8;
    // Room right of each bar for its label: (bytes / top) * width + label <= width.
    double top = std::max(limit, 1.0) * 1.05;
    for (int row = 0; row < categories_.size(); ++row) {
        const double bytes = categories_[row] == kPeak ? peak : double(estimate);
        const double room = plotWidth - totals_[size_t(row)]->boundingRect().width() - 12;
        top = std::max(top, room > plotWidth * 0.3 ? bytes * plotWidth / room : bytes * 1.5);
    }
    chartstyle::setTicks(valueAxis_, 0.0, top * scale_, plotWidth, 90);
    valueAxis_->setTitleText(QStringLiteral("memory (%1)").arg(unit.suffix));
    restyle();
    placeLabels();
}

void MemoryBar::restyle() {
    const bool isDark = dark();
    for (size_t i = 0; i < sets_.size(); ++i) {
        const QString name = sets_[i]->label().startsWith(kPeak) ? kPeak : sets_[i]->label();
        sets_[i]->setColor(chartstyle::categoryColor(name, int(i), isDark));
        sets_[i]->setBorderColor(palette().color(QPalette::Window));
    }
    QPen limit(isDark ? QColor(0xff6b6b) : QColor(0xc62828));
    limit.setWidthF(2.0);
    limit.setStyle(Qt::DashLine);
    limitLine_->setPen(limit);
    limitLabel_->setBrush(limit.color());
    limitLabel_->setBackdrop(palette().color(QPalette::Window));
    // A bar past the device's memory has its total in the limit's colour.
    const double limitBytes = double(footprint_.limitBytes.value_or(0));
    for (size_t row = 0; row < totals_.size(); ++row) {
        const double bytes = categories_[int(row)] == kPeak ? double(footprint_.peakRssBytes.value_or(0)) : double(estimateBytes());
        totals_[row]->setBrush(limitBytes > 0 && bytes > limitBytes ? limit.color() : palette().color(QPalette::WindowText));
        totals_[row]->setBackdrop(palette().color(QPalette::Window));
    }
    // The limit line is labelled where it stands; the legend is for the parts.
    for (QLegendMarker* m : chart()->legend()->markers(limitLine_)) m->setVisible(false);
}

void MemoryBar::placeLabels() {
    const QRectF plot = chart()->plotArea();
    const double peak = double(footprint_.peakRssBytes.value_or(0));
    for (size_t row = 0; row < totals_.size(); ++row) {
        const double bytes = categories_[int(row)] == kPeak ? peak : double(estimateBytes());
        const QPointF end = chart()->mapToPosition(QPointF(bytes * scale_, double(row)), limitLine_);
        const QRectF box = totals_[row]->boundingRect();
        totals_[row]->setPos(std::min(end.x() + 6, plot.right() - box.width() - 2), end.y() - box.height() / 2);
    }
    if (footprint_.limitBytes) {
        const QPointF at = chart()->mapToPosition(QPointF(double(*footprint_.limitBytes) * scale_, categories_.size() - 0.5),
                                                  limitLine_);
        const QRectF box = limitLabel_->boundingRect();
        // Inside the plot's top edge, right of the line (left of it when there is no room).
        const double left = at.x() + 5 + box.width() <= plot.right() ? at.x() + 5 : at.x() - 5 - box.width();
        limitLabel_->setPos(std::max(left, plot.left()), plot.top() + 2);
    }
}

QString MemoryBar::tooltipAt(const QPointF& pos) const {
    const QPointF at = toChart(pos);
    const QRectF plot = chart()->plotArea();
    if (!plot.adjusted(-4, -4, 4, 4).contains(at)) return {};
    const QPointF v = chart()->mapToValue(at, limitLine_);
    if (footprint_.limitBytes) {
        const QPointF line = chart()->mapToPosition(QPointF(double(*footprint_.limitBytes) * scale_, v.y()), limitLine_);
        if (std::abs(line.x() - at.x()) <= 5)
            return QStringLiteral("<b>%1 memory</b><br>%2")
                .arg((footprint_.deviceName.isEmpty() ? QStringLiteral("device") : footprint_.deviceName).toHtmlEscaped(),
                     axisformat::bytes(double(*footprint_.limitBytes)));
    }
    const int row = int(std::lround(v.y()));
    if (row < 0 || row >= categories_.size() || std::abs(v.y() - row) > kBarWidth / 2) return {};
    const double bytes = v.x() / scale_;
    if (categories_[row] == kPeak) {
        const double peak = double(*footprint_.peakRssBytes);
        if (bytes < 0 || bytes > peak) return {};
        return QStringLiteral("<b>peak RSS (measured)</b><br>%1<br>%2").arg(axisformat::bytes(peak), shareOfLimit(peak));
    }
    double below = 0.0;
    const double total = double(estimateBytes());
    for (const MemoryPart& p : footprint_.parts) {
        const double b = double(std::max<int64_t>(p.bytes, 0));
        if (bytes >= below && bytes < below + b)
            return QStringLiteral("<b>%1</b><br>%2 (%3 % of the estimate)<br>%4")
                .arg(p.name.toHtmlEscaped(), axisformat::bytes(b), QString::number(total > 0 ? 100.0 * b / total : 0.0, 'f', 1),
                     shareOfLimit(b));
        below += b;
    }
    return {};
}

QStringList MemoryBar::barLabels() const {
    QStringList out;
    for (size_t row = totals_.size(); row-- > 0;) out << totals_[row]->text();
    return out;
}

QString MemoryBar::csv() const {
    QString out = QStringLiteral("part,bytes\n");
    for (const MemoryPart& p : footprint_.parts) out += chartexport::field(p.name) + QLatin1Char(',') + QString::number(p.bytes) + QLatin1Char('\n');
    out += QStringLiteral("estimate total,%1\n").arg(estimateBytes());
    if (footprint_.peakRssBytes) out += QStringLiteral("peak RSS (measured),%1\n").arg(*footprint_.peakRssBytes);
    if (footprint_.limitBytes)
        out += chartexport::field(QStringLiteral("device limit (%1)").arg(footprint_.deviceName)) + QLatin1Char(',') +
               QString::number(*footprint_.limitBytes) + QLatin1Char('\n');
    return out;
}

}  // namespace trainbench::ui
