#pragma once
// Runs page: every run of the store in a sortable, filterable table; runs that differ only by seed
// can be grouped. Open a run's dashboard (Enter, double-click), compare a selection, rename (F2),
// delete (Del, confirmed), export a report of the selection. Renaming or deleting in a store of an
// older schema asks to upgrade it first (StoreUpgradePrompt).
#include <QList>
#include <QWidget>

#include "ui/store/storesnapshot.h"

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QTreeView;

namespace trainbench::ui {

class RunFilterModel;
class RunTableModel;
class StoreService;

class RunsPage : public QWidget {
    Q_OBJECT
public:
    explicit RunsPage(StoreService& store, QWidget* parent = nullptr);

    // The runs selected (a group counts as its runs), in table order.
    QList<qint64> selectedRuns() const;
    void selectRuns(const QList<qint64>& ids);
    RunTableModel& model() { return *model_; }
    QTreeView& view() { return *view_; }

    QAction* compareAction() const { return compare_; }
    QAction* deleteAction() const { return delete_; }
    QAction* renameAction() const { return rename_; }
    QAction* reportAction() const { return report_; }

    // Deletes without asking (the confirmation is in the Delete action).
    void deleteRuns(const QList<qint64>& ids);

signals:
    void openRun(qint64 id);
    void compareRuns(const QList<qint64>& ids);
    void exportReport(const QList<qint64>& ids);

private:
    void updateActions();
    void confirmDelete();
    void renameCurrent();

    StoreService& store_;
    RunTableModel* model_ = nullptr;
    RunFilterModel* filter_ = nullptr;
    QTreeView* view_ = nullptr;
    QLineEdit* search_ = nullptr;
    QComboBox* status_ = nullptr;
    QComboBox* kind_ = nullptr;
    QLabel* count_ = nullptr;
    QAction* compare_ = nullptr;
    QAction* delete_ = nullptr;
    QAction* rename_ = nullptr;
    QAction* report_ = nullptr;
    QAction* group_ = nullptr;
};

}  // namespace trainbench::ui
