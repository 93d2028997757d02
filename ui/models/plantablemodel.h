#pragma once
// Plan page: the planner's ranked configurations as table rows: time and cost to the target,
// whether each meets the deadline, the budget and both, how many runs it rests on and whether it
// was measured, emulated or projected. A cost without a price is "unknown", never $0.
#include <QAbstractTableModel>

#include "profiler/plan/plan.h"

namespace trainbench::ui {

class PlanTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Rank, Configuration, Devices, Source, Runs, Time, Cost, Deadline, Budget, Both, Notes, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 1 };  // numbers as numbers

    explicit PlanTableModel(QObject* parent = nullptr);

    void setPlan(profiler::Plan plan);
    const profiler::Plan& plan() const { return plan_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString text(const profiler::PlanRow& row, size_t rank, int column) const;
    QString note(const profiler::PlanRow& row, size_t rank) const;

    profiler::Plan plan_;
};

}  // namespace trainbench::ui
