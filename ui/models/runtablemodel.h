#pragma once
// Every run of the store as rows of a table (Runs page). With grouping on, runs whose experiments
// differ only by seed (and name: profiler::seedGroupKey) become one row with the runs as children, its figures the mean
// over them. Snapshots come from StoreService; rows are inserted for new runs (selection survives
// a run being added) and the model is reset only when grouping changes the structure.
#include <QAbstractItemModel>

#include <optional>
#include <string>
#include <vector>

#include "ui/store/storesnapshot.h"

namespace trainbench::ui {

class RunTableModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Name, Status, Kind, Strategy, Devices, GlobalBatch, FinalAccuracy, TimeToTarget, Throughput, Cost,
                  Verdict, Started, ColumnCount };
    enum Role {
        RunIdRole = Qt::UserRole + 1,  // qint64 of a run row; invalid for a group row
        RunIdsRole,                    // QList<qint64>: the run, or every run of a group
        SortRole,                      // the raw value to sort by (numbers as numbers)
        IsGroupRole,
    };

    explicit RunTableModel(QObject* parent = nullptr);

    void setRuns(const RunListPtr& runs);
    void setGroupBySeed(bool on);
    bool groupBySeed() const { return groupBySeed_; }

    // The row of a run index; nullptr for a group row or an invalid index.
    const profiler::RunRow* runAt(const QModelIndex& index) const;
    QModelIndex indexOfRun(qint64 id) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Group {
        std::string key;
        std::vector<size_t> members;  // indices into runs_->runs, newest first
    };
    static constexpr quintptr kTopLevel = ~quintptr(0);

    std::vector<Group> groupsOf(const RunList& list) const;
    QVariant runData(const profiler::RunRow& run, int column, int role) const;
    QVariant groupData(const Group& group, int column, int role) const;
    static std::vector<qint64> idsOf(const RunList& list, const std::vector<Group>& groups);

    RunListPtr runs_;
    std::vector<Group> groups_;
    bool groupBySeed_ = false;
};

}  // namespace trainbench::ui
