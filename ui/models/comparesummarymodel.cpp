#include "ui/models/comparesummarymodel.h"

#include "ui/models/format.h"

namespace trainbench::ui {

CompareSummaryModel::CompareSummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareSummaryModel::setRuns(std::vector<RunFigures> runs) {
    beginResetModel();
    titles_.clear();
    figures_.clear();
    auto add = [&](const QString& label, const QString& tip, auto value) {
        Figure f{label, tip, {}};
        for (const RunFigures& r : runs) f.values.push_back(value(r));
        figures_.push_back(std::move(f));
    };
    for (const RunFigures& r : runs) titles_ << QStringLiteral("%1 (%2)").arg(QString::fromStdString(r.row.name)).arg(r.row.id.value);
    add(tr("status"), {}, [](const RunFigures& r) { return QString::fromStdString(std::string(profiler::runStatusName(r.row.status))); });
    add(tr("verdict"), tr("What bounds the run, as the profiler classified it"),
        [](const RunFigures& r) { return QString::fromStdString(r.row.verdict.value_or("")); });
    add(tr("strategy"), {}, [](const RunFigures& r) { return QString::fromStdString(r.row.strategy); });
    add(tr("devices"), {}, [](const RunFigures& r) { return QString::fromStdString(r.row.devices); });
    add(tr("global batch"), {}, [](const RunFigures& r) { return format::integer(r.row.global_batch); });
    add(tr("steps"), {}, [](const RunFigures& r) {
        return format::integer(r.row.steps ? r.row.steps : (r.steps.empty() ? std::nullopt : std::optional<int64_t>(r.steps.back().step)));
    });
    add(tr("final accuracy"), {}, [](const RunFigures& r) { return format::percent(r.row.final_accuracy); });
    add(tr("best accuracy"), {}, [](const RunFigures& r) { return format::percent(r.row.best_accuracy); });
    add(tr("time to target"), tr("Training time until the target accuracy was first reached"),
        [](const RunFigures& r) { return format::duration(r.row.time_to_target); });
    add(tr("throughput"), tr("Samples per second in steady state"),
        [](const RunFigures& r) { return format::throughput(r.row.throughput); });
    add(tr("training time"), {}, [](const RunFigures& r) { return format::duration(r.row.train_seconds); });
    // Where a step's time goes: mean seconds per step over the recorded steps, and each in-step
    // phase's mean and share.
    add(tr("step time"), tr("Mean wall time of a training step"), [](const RunFigures& r) -> QString {
        if (r.steps.empty()) return {};
        double total = 0;
        for (const auto& s : r.steps) total += s.step_seconds;
        return format::duration(total / static_cast<double>(r.steps.size()));
    });
    for (const profiler::StepPhase& p : profiler::kInStepPhases) {
        add(QStringLiteral("  ") + tr(std::string(p.compareName).c_str()), tr(std::string(p.description).c_str()),
            [&p](const RunFigures& r) -> QString {
                if (r.steps.empty()) return {};
                double sum = 0, total = 0;
                for (const auto& s : r.steps) {
                    sum += s.*p.seconds;
                    total += s.step_seconds;
                }
                const double mean = sum / static_cast<double>(r.steps.size());
                return format::duration(mean) + QStringLiteral("  (") +
                       format::percent(total > 0 ? sum / total : 0.0) + QStringLiteral(")");
            });
    }
    endResetModel();
}

QStringList CompareSummaryModel::figures() const {
    QStringList l;
    for (const Figure& f : figures_) l << f.label.trimmed();
    return l;
}

int CompareSummaryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(figures_.size());
}

int CompareSummaryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 1 + static_cast<int>(titles_.size());
}

QVariant CompareSummaryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(figures_.size())) return {};
    const Figure& f = figures_[static_cast<size_t>(index.row())];
    if (role == Qt::ToolTipRole && !f.tooltip.isEmpty()) return f.tooltip;
    if (role == Qt::TextAlignmentRole && index.column() > 0) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    if (index.column() == 0) return f.label;
    return f.values[static_cast<size_t>(index.column() - 1)];
}

QVariant CompareSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == 0) return QString();
    return section - 1 < titles_.size() ? QVariant(titles_[section - 1]) : QVariant();
}

}  // namespace trainbench::ui
