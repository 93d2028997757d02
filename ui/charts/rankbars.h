#pragma once
// Where each part of a distributed step went, per rank: one horizontal bar per pipeline stage,
// tensor-parallel device or replica (first at the top), stacked from its mean compute, sending and
// idle time per step (idle: blocked on a neighbour or a slower rank — a pipeline's bubble and its
// imbalance), with the bar's total at its end. A stage that computes much longer than the others
// is the one the rest wait for.
#include "ui/charts/stackedbars.h"

#include <vector>

namespace trainbench::ui {

struct RankParts {
    QString label;  // "stage 0", "replica 3"
    double computeSeconds = 0.0, sendSeconds = 0.0, idleSeconds = 0.0;
    double total() const { return computeSeconds + sendSeconds + idleSeconds; }
    bool operator==(const RankParts&) const = default;
};

class RankBars : public StackedBars {
    Q_OBJECT
public:
    explicit RankBars(QWidget* parent = nullptr);

    void setRanks(std::vector<RankParts> ranks);
    const std::vector<RankParts>& ranks() const { return ranks_; }

private:
    std::vector<RankParts> ranks_;
};

}  // namespace trainbench::ui
