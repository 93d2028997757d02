#include "ui/charts/stackedbars.h"

#include "ui/charts/axisformat.h"
#include "ui/charts/chartexport.h"
#include "ui/charts/chartstyle.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trainbench::ui {
namespace {
constexpr double kStackedBarWidth = 0.6;
}  // namespace

double StackedRow::total() const { return std::accumulate(seconds.begin(), seconds.end(), 0.0); }

StackedBars::StackedBars(std::vector<StackPart> parts, QString rowColumn, QString axisTitle, QWidget* parent)
    : ChartView(parent), parts_(std::move(parts)), rowColumn_(std::move(rowColumn)), axisTitle_(std::move(axisTitle)) {
    bars_ = new QHorizontalStackedBarSeries(this);
    bars_->setBarWidth(kStackedBarWidth);
    valueAxis_ = new QValueAxis(this);
    categoryAxis_ = new QBarCategoryAxis(this);
    chart()->addSeries(bars_);
    chart()->addAxis(valueAxis_, Qt::AlignBottom);
    chart()->addAxis(categoryAxis_, Qt::AlignLeft);
    bars_->attachAxis(valueAxis_);
    bars_->attachAxis(categoryAxis_);
    connect(chart(), &QChart::plotAreaChanged, this, &StackedBars::placeLabels);
    applyPalette();
    requestRedraw();
}

void StackedBars::setTitle(const QString& title) { chart()->setTitle(title); }

void StackedBars::setRows(std::vector<StackedRow> rows) {
    for (StackedRow& r : rows) r.seconds.resize(parts_.size(), 0.0);
    rows_ = std::move(rows);
    requestRedraw();
}

void StackedBars::redraw() {
    bars_->clear();  // deletes the sets
    sets_.clear();
    for (ChartLabel* t : totals_) delete t;
    totals_.clear();
    double longest = 0.0;
    for (const StackedRow& r : rows_) longest = std::max(longest, r.total());
    const axisformat::Unit unit = axisformat::secondsUnit(std::max(longest, 1e-6));
    scale_ = unit.scale;
    // Qt Charts stacks horizontal categories bottom-up: the first row goes on top.
    QStringList categories;
    for (size_t i = rows_.size(); i-- > 0;) categories << rows_[i].label;
    for (size_t p = 0; p < parts_.size(); ++p) {
        auto* set = new QBarSet(parts_[p].name);
        for (size_t i = rows_.size(); i-- > 0;) *set << rows_[i].seconds[p] * scale_;
        sets_.push_back(set);
    }
    for (QBarSet* set : sets_) bars_->append(set);
    categoryAxis_->clear();
    categoryAxis_->append(categories);
    for (size_t row = 0; row < rows_.size(); ++row) {
        auto* total = new ChartLabel(chart());
        total->setText(axisformat::seconds(rows_[rows_.size() - 1 - row].total()));
        totals_.push_back(total);
    }
    const QRectF plot = chart()->plotArea();
    const double plotWidth = plot.width() > 1 ? plot.width() : width() * 0.8;
    // Room right of the longest bar for its label.
    double widest = 0.0;
    for (ChartLabel* t : totals_) widest = std::max(widest, t->boundingRect().width());
    const double room = plotWidth - widest - 12;
    const double top = std::max(longest, 1e-6) * (room > plotWidth * 0.3 ? plotWidth / room : 1.5);
    chartstyle::setTicks(valueAxis_, 0.0, top * scale_, plotWidth, 90);
    valueAxis_->setTitleText(QStringLiteral("%1 (%2)").arg(axisTitle_, unit.suffix));
    restyle();
    placeLabels();
}

void StackedBars::restyle() {
    const bool isDark = dark();
    for (size_t i = 0; i < sets_.size(); ++i) {
        sets_[i]->setColor(chartstyle::categoryColor(parts_[i].category, int(i), isDark));
        sets_[i]->setBorderColor(palette().color(QPalette::Window));
    }
    for (ChartLabel* t : totals_) {
        t->setBrush(palette().color(QPalette::WindowText));
        t->setBackdrop(palette().color(QPalette::Window));
    }
}

void StackedBars::placeLabels() {
    const QRectF plot = chart()->plotArea();
    for (size_t row = 0; row < totals_.size(); ++row) {
        const double seconds = rows_[rows_.size() - 1 - row].total();
        const QPointF end = chart()->mapToPosition(QPointF(seconds * scale_, double(row)), bars_);
        const QRectF box = totals_[row]->boundingRect();
        totals_[row]->setPos(std::min(end.x() + 6, plot.right() - box.width() - 2), end.y() - box.height() / 2);
    }
}

QString StackedBars::tooltipAt(const QPointF& pos) const {
    const QPointF at = toChart(pos);
    if (!chart()->plotArea().adjusted(-4, -4, 4, 4).contains(at)) return {};
    const QPointF v = chart()->mapToValue(at, bars_);
    const int row = int(std::lround(v.y()));
    if (row < 0 || row >= int(rows_.size()) || std::abs(v.y() - row) > kStackedBarWidth / 2) return {};
    const StackedRow& r = rows_[rows_.size() - 1 - size_t(row)];
    const double seconds = v.x() / scale_;
    double below = 0.0;
    for (size_t p = 0; p < parts_.size(); ++p) {
        const double s = r.seconds[p];
        if (seconds >= below && seconds < below + s)
            return QStringLiteral("<b>%1: %2</b><br>%3 per step (%4 % of its step)")
                .arg(r.label.toHtmlEscaped(), parts_[p].name.toHtmlEscaped(), axisformat::seconds(s),
                     QString::number(r.total() > 0 ? 100.0 * s / r.total() : 0.0, 'f', 1));
        below += s;
    }
    return {};
}

QStringList StackedBars::barLabels() const {
    QStringList out;
    for (size_t row = totals_.size(); row-- > 0;) out << totals_[row]->text();
    return out;
}

QString StackedBars::csv() const {
    QString out = rowColumn_;
    for (const StackPart& p : parts_) out += QLatin1Char(',') + p.column;
    out += QLatin1Char('\n');
    for (const StackedRow& r : rows_) {
        out += chartexport::field(r.label);
        for (double s : r.seconds) out += QStringLiteral(",%1").arg(s, 0, 'g', 9);
        out += QLatin1Char('\n');
    }
    return out;
}

}  // namespace trainbench::ui
