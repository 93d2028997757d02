#include "ui/charts/rankbars.h"

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

namespace trainbench::ui {
namespace {

constexpr double kRankBarWidth = 0.6;
// Each part with the step-time colour it stands for: computing, sending, waiting.
struct Part {
    const char* name;
    const char* colour;
    double RankParts::*seconds;
};
constexpr Part kRankParts[] = {{"compute", "forward", &RankParts::computeSeconds},
                           {"sending", "communication", &RankParts::sendSeconds},
                           {"idle (bubble, waiting)", "other", &RankParts::idleSeconds}};

}  // namespace

RankBars::RankBars(QWidget* parent) : ChartView(parent) {
    bars_ = new QHorizontalStackedBarSeries(this);
    bars_->setBarWidth(kRankBarWidth);
    valueAxis_ = new QValueAxis(this);
    categoryAxis_ = new QBarCategoryAxis(this);
    chart()->addSeries(bars_);
    chart()->addAxis(valueAxis_, Qt::AlignBottom);
    chart()->addAxis(categoryAxis_, Qt::AlignLeft);
    bars_->attachAxis(valueAxis_);
    bars_->attachAxis(categoryAxis_);
    connect(chart(), &QChart::plotAreaChanged, this, &RankBars::placeLabels);
    applyPalette();
    requestRedraw();
}

void RankBars::setTitle(const QString& title) { chart()->setTitle(title); }

void RankBars::setRanks(std::vector<RankParts> ranks) {
    ranks_ = std::move(ranks);
    requestRedraw();
}

void RankBars::redraw() {
    bars_->clear();  // deletes the sets
    sets_.clear();
    for (ChartLabel* t : totals_) delete t;
    totals_.clear();
    double longest = 0.0;
    for (const RankParts& r : ranks_) longest = std::max(longest, r.total());
    const axisformat::Unit unit = axisformat::secondsUnit(std::max(longest, 1e-6));
    scale_ = unit.scale;
    // Qt Charts stacks horizontal categories bottom-up: the first rank goes on top.
    QStringList categories;
    for (size_t i = ranks_.size(); i-- > 0;) categories << ranks_[i].label;
    for (const Part& p : kRankParts) {
        auto* set = new QBarSet(QString::fromLatin1(p.name));
        for (size_t i = ranks_.size(); i-- > 0;) *set << ranks_[i].*p.seconds * scale_;
        sets_.push_back(set);
    }
    for (QBarSet* set : sets_) bars_->append(set);
    categoryAxis_->clear();
    categoryAxis_->append(categories);
    for (size_t row = 0; row < ranks_.size(); ++row) {
        auto* total = new ChartLabel(chart());
        total->setText(axisformat::seconds(ranks_[ranks_.size() - 1 - row].total()));
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
    valueAxis_->setTitleText(QStringLiteral("mean per step (%1)").arg(unit.suffix));
    restyle();
    placeLabels();
}

void RankBars::restyle() {
    const bool isDark = dark();
    for (size_t i = 0; i < sets_.size(); ++i) {
        sets_[i]->setColor(chartstyle::categoryColor(QString::fromLatin1(kRankParts[i].colour), int(i), isDark));
        sets_[i]->setBorderColor(palette().color(QPalette::Window));
    }
    for (ChartLabel* t : totals_) {
        t->setBrush(palette().color(QPalette::WindowText));
        t->setBackdrop(palette().color(QPalette::Window));
    }
}

void RankBars::placeLabels() {
    const QRectF plot = chart()->plotArea();
    for (size_t row = 0; row < totals_.size(); ++row) {
        const double seconds = ranks_[ranks_.size() - 1 - row].total();
        const QPointF end = chart()->mapToPosition(QPointF(seconds * scale_, double(row)), bars_);
        const QRectF box = totals_[row]->boundingRect();
        totals_[row]->setPos(std::min(end.x() + 6, plot.right() - box.width() - 2), end.y() - box.height() / 2);
    }
}

QString RankBars::tooltipAt(const QPointF& pos) const {
    const QPointF at = toChart(pos);
    if (!chart()->plotArea().adjusted(-4, -4, 4, 4).contains(at)) return {};
    const QPointF v = chart()->mapToValue(at, bars_);
    const int row = int(std::lround(v.y()));
    if (row < 0 || row >= int(ranks_.size()) || std::abs(v.y() - row) > kRankBarWidth / 2) return {};
    const RankParts& r = ranks_[ranks_.size() - 1 - size_t(row)];
    const double seconds = v.x() / scale_;
    double below = 0.0;
    for (const Part& p : kRankParts) {
        const double s = r.*p.seconds;
        if (seconds >= below && seconds < below + s)
            return QStringLiteral("<b>%1: %2</b><br>%3 per step (%4 % of its step)")
                .arg(r.label.toHtmlEscaped(), QString::fromLatin1(p.name), axisformat::seconds(s),
                     QString::number(r.total() > 0 ? 100.0 * s / r.total() : 0.0, 'f', 1));
        below += s;
    }
    return {};
}

QStringList RankBars::barLabels() const {
    QStringList out;
    for (size_t row = totals_.size(); row-- > 0;) out << totals_[row]->text();
    return out;
}

QString RankBars::csv() const {
    QString out = QStringLiteral("rank,compute_seconds,send_seconds,idle_seconds\n");
    for (const RankParts& r : ranks_)
        out += chartexport::field(r.label) + QStringLiteral(",%1,%2,%3\n")
                                                 .arg(r.computeSeconds, 0, 'g', 9)
                                                 .arg(r.sendSeconds, 0, 'g', 9)
                                                 .arg(r.idleSeconds, 0, 'g', 9);
    return out;
}

}  // namespace trainbench::ui
