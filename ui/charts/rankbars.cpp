#include "ui/charts/rankbars.h"

namespace trainbench::ui {

// Each part with the step-time colour it stands for: computing, sending, waiting.
RankBars::RankBars(QWidget* parent)
    : StackedBars({{QStringLiteral("compute"), QStringLiteral("forward"), QStringLiteral("compute_seconds")},
                   {QStringLiteral("sending"), QStringLiteral("communication"), QStringLiteral("send_seconds")},
                   {QStringLiteral("idle (bubble, waiting)"), QStringLiteral("other"), QStringLiteral("idle_seconds")}},
                  QStringLiteral("rank"), QStringLiteral("mean per step"), parent) {}

void RankBars::setRanks(std::vector<RankParts> ranks) {
    ranks_ = std::move(ranks);
    std::vector<StackedRow> rows;
    rows.reserve(ranks_.size());
    for (const RankParts& r : ranks_) rows.push_back({r.label, {r.computeSeconds, r.sendSeconds, r.idleSeconds}});
    setRows(std::move(rows));
}

}  // namespace trainbench::ui
