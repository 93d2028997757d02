#include "ui/models/plantablemodel.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include "profiler/format/numberformat.h"

namespace trainbench::ui {

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }
QString yesNo(bool v) { return v ? QStringLiteral("yes") : QStringLiteral("no"); }

}  // namespace

PlanTableModel::PlanTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void PlanTableModel::setPlan(profiler::Plan plan) {
    beginResetModel();
    plan_ = std::move(plan);
    endResetModel();
}

int PlanTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(plan_.rows.size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString PlanTableModel::note(const profiler::PlanRow& row, size_t rank) const {
    const auto& c = row.candidate;
    QStringList parts;
    if (plan_.fastest_within_budget == rank) parts << (plan_.limits.budget ? tr("fastest within budget") : tr("fastest"));
    if (plan_.cheapest_within_deadline == rank)
        parts << (plan_.limits.deadline_seconds ? tr("cheapest within deadline") : tr("cheapest"));
    if (!c.seconds) parts << str(c.why);
    else if (c.source == profiler::PlanSource::Projected) parts << tr("projected: %1").arg(str(c.note));
    if (c.pending > 0) parts << tr("%n run(s) still running", nullptr, c.pending);
    return parts.join(QStringLiteral("; "));
}

QString PlanTableModel::text(const profiler::PlanRow& row, size_t rank, int column) const {
    const auto& c = row.candidate;
    switch (column) {
        case Rank: return QString::number(rank + 1);
        case Configuration: return str(c.label);
        case Devices: return str(c.devices);
        case Source: return QString::fromLatin1(profiler::planSourceName(c.source));
        case Runs: return c.source == profiler::PlanSource::Projected ? tr("(%1)").arg(c.runs) : QString::number(c.runs);
        case Time: return c.seconds ? str(profiler::formatDuration(*c.seconds)) : tr("not reached");
        case Cost:
            if (!c.seconds) return QString();
            return c.cost ? str(profiler::formatMoney(*c.cost)) : tr("unknown");
        case Deadline:
            if (!c.seconds) return QString();
            return plan_.limits.deadline_seconds ? yesNo(row.meets_deadline) : QStringLiteral("–");
        case Budget:
            if (!c.seconds) return QString();
            if (!plan_.limits.budget) return QStringLiteral("–");
            return row.meets_budget ? yesNo(*row.meets_budget) : tr("unknown");
        case Both: return yesNo(row.meetsBoth());
        case Notes: return note(row, rank);
    }
    return {};
}

QVariant PlanTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const auto rank = static_cast<size_t>(index.row());
    const profiler::PlanRow& row = plan_.rows[rank];
    const auto& c = row.candidate;
    switch (role) {
        case Qt::DisplayRole: return text(row, rank, index.column());
        case Qt::ToolTipRole:
            if (index.column() == Notes || index.column() == Time) return note(row, rank);
            if (index.column() == Runs && !c.run_ids.empty()) {
                QStringList ids;
                for (const auto& id : c.run_ids) ids << QString::number(id.value);
                return (c.source == profiler::PlanSource::Projected ? tr("convergence from runs %1") : tr("runs %1"))
                    .arg(ids.join(QStringLiteral(", ")));
            }
            return {};
        case SortRole:
            if (index.column() == Time) return c.seconds ? QVariant(*c.seconds) : QVariant();
            if (index.column() == Cost) return c.cost ? QVariant(*c.cost) : QVariant();
            return text(row, rank, index.column());
        case Qt::TextAlignmentRole:
            if (index.column() == Rank || index.column() == Runs || index.column() == Time || index.column() == Cost)
                return QVariant(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Qt::BackgroundRole:
            // Translucent, so it reads on light and dark palettes alike.
            if (row.meetsBoth()) return QBrush(QColor(46, 160, 67, 48));
            if (!c.seconds) return QBrush(QColor(128, 128, 128, 36));
            return {};
        case Qt::FontRole:
            if (plan_.fastest_within_budget == rank || plan_.cheapest_within_deadline == rank) {
                QFont f;
                f.setBold(true);
                return f;
            }
            return {};
    }
    return {};
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"#", "Configuration", "Devices", "Source", "Runs", "Time to target", "Cost to target",
                                  "Deadline", "Budget", "Both", "Notes"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace trainbench::ui
