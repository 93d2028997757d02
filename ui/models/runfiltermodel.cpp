#include "ui/models/runfiltermodel.h"

#include "ui/models/runtablemodel.h"

namespace trainbench::ui {

RunFilterModel::RunFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(RunTableModel::SortRole);
    setRecursiveFilteringEnabled(true);
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

void RunFilterModel::setText(const QString& text) {
    words_ = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    invalidateFilter();
}

void RunFilterModel::setStatus(const QString& status) {
    status_ = status;
    invalidateFilter();
}

void RunFilterModel::setKind(const QString& kind) {
    kind_ = kind;
    invalidateFilter();
}

bool RunFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QAbstractItemModel* m = sourceModel();
    auto cell = [&](int column) { return m->index(sourceRow, column, sourceParent).data().toString(); };
    // A group row stands for its runs: with recursive filtering it shows when a child matches.
    if (m->index(sourceRow, 0, sourceParent).data(RunTableModel::IsGroupRole).toBool()) return false;
    if (!status_.isEmpty() && cell(RunTableModel::Status) != status_) return false;
    if (!kind_.isEmpty() && cell(RunTableModel::Kind) != kind_) return false;
    const QString haystack = QStringList{cell(RunTableModel::Name), cell(RunTableModel::Status),
                                         cell(RunTableModel::Strategy), cell(RunTableModel::Devices),
                                         cell(RunTableModel::Verdict)}
                                 .join(QLatin1Char(' '));
    for (const QString& w : words_)
        if (!haystack.contains(w, Qt::CaseInsensitive)) return false;
    return true;
}

}  // namespace trainbench::ui
