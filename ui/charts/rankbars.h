#pragma once
// Where each part of a distributed step went, per rank: one horizontal bar per pipeline stage,
// tensor-parallel device or replica (first at the top), stacked from its mean compute, sending and
// idle time per step (idle: blocked on a neighbour or a slower rank — a pipeline's bubble and its
// imbalance), with the bar's total at its end. A stage that computes much longer than the others
// is the one the rest wait for.
#include "ui/charts/chartlabel.h"
#include "ui/charts/chartview.h"

#include <vector>

QT_BEGIN_NAMESPACE
class QBarSet;
class QBarCategoryAxis;
class QHorizontalStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace trainbench::ui {

struct RankParts {
    QString label;  // "stage 0", "replica 3"
    double computeSeconds = 0.0, sendSeconds = 0.0, idleSeconds = 0.0;
    double total() const { return computeSeconds + sendSeconds + idleSeconds; }
    bool operator==(const RankParts&) const = default;
};

class RankBars : public ChartView {
    Q_OBJECT
public:
    explicit RankBars(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    void setRanks(std::vector<RankParts> ranks);
    const std::vector<RankParts>& ranks() const { return ranks_; }
    // The total labels at the bars' ends, top bar (the first rank) first (tests).
    QStringList barLabels() const;

    QString csv() const override;
    QString tooltipAt(const QPointF& pos) const override;

protected:
    void redraw() override;
    void restyle() override;

private:
    void placeLabels();

    std::vector<RankParts> ranks_;
    QHorizontalStackedBarSeries* bars_ = nullptr;
    std::vector<QBarSet*> sets_;  // compute, sending, idle
    QValueAxis* valueAxis_ = nullptr;
    QBarCategoryAxis* categoryAxis_ = nullptr;
    std::vector<ChartLabel*> totals_;  // per bar, bottom-up as Qt Charts stacks them
    double scale_ = 1000.0;  // seconds → axis unit (ms or s)
};

}  // namespace trainbench::ui
