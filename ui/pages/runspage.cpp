#include "ui/pages/runspage.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>

#include "ui/dialogs/storeupgradeprompt.h"
#include "ui/models/runfiltermodel.h"
#include "ui/models/runtablemodel.h"
#include "ui/store/storeservice.h"

namespace trainbench::ui {

RunsPage::RunsPage(StoreService& store, QWidget* parent) : QWidget(parent), store_(store) {
    model_ = new RunTableModel(this);
    filter_ = new RunFilterModel(this);
    filter_->setSourceModel(model_);

    search_ = new QLineEdit;
    search_->setPlaceholderText(tr("Filter: name, strategy, devices, verdict…"));
    search_->setClearButtonEnabled(true);
    search_->setToolTip(tr("Shows the runs that contain every word (Ctrl+F)"));
    status_ = new QComboBox;
    status_->addItem(tr("Any status"), QString());
    for (const char* s : {"running", "completed", "stopped", "failed", "interrupted"})
        status_->addItem(QString::fromLatin1(s), QString::fromLatin1(s));
    status_->setToolTip(tr("Only runs with this status"));
    kind_ = new QComboBox;
    kind_->addItem(tr("Any kind"), QString());
    for (const char* k : {"train", "predict", "serve"}) kind_->addItem(QString::fromLatin1(k), QString::fromLatin1(k));
    kind_->setToolTip(tr("Only training runs, prediction runs (trainbench-cli predict) or load tests (trainbench-cli loadtest)"));
    count_ = new QLabel;

    auto* bar = new QToolBar;
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    group_ = bar->addAction(tr("Group seeds"));
    group_->setCheckable(true);
    group_->setToolTip(tr("One row for runs whose experiments differ only by seed: mean ± standard deviation"));
    compare_ = bar->addAction(tr("Compare"));
    compare_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
    compare_->setToolTip(tr("Compare the selected runs: convergence, scaling, config and verdicts (Ctrl+M)"));
    report_ = bar->addAction(tr("Export report…"));
    report_->setToolTip(tr("Write an HTML or PDF report of the selected runs"));
    rename_ = bar->addAction(tr("Rename…"));
    rename_->setShortcut(QKeySequence(Qt::Key_F2));
    rename_->setToolTip(tr("Rename the selected run (F2)"));
    delete_ = bar->addAction(tr("Delete…"));
    delete_->setShortcut(QKeySequence::Delete);
    delete_->setToolTip(tr("Delete the selected runs and everything recorded about them (Del)"));
    for (QAction* a : {compare_, report_, rename_, delete_}) {
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(a);
    }
    auto* find = new QAction(this);
    find->setShortcut(QKeySequence::Find);
    find->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(find, &QAction::triggered, search_, [this] { search_->setFocus(); search_->selectAll(); });
    addAction(find);

    view_ = new QTreeView;
    view_->setModel(filter_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(RunTableModel::Started, Qt::DescendingOrder);
    view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setUniformRowHeights(true);
    view_->setAlternatingRowColors(true);
    view_->setRootIsDecorated(false);
    view_->header()->setStretchLastSection(false);
    view_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view_->header()->setSectionResizeMode(RunTableModel::Name, QHeaderView::Stretch);
    view_->header()->setSectionResizeMode(RunTableModel::Verdict, QHeaderView::Stretch);

    auto* top = new QHBoxLayout;
    top->addWidget(search_, 1);
    top->addWidget(status_);
    top->addWidget(kind_);
    top->addWidget(bar);
    top->addWidget(count_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(view_, 1);

    connect(search_, &QLineEdit::textChanged, filter_, &RunFilterModel::setText);
    connect(kind_, &QComboBox::currentIndexChanged, this, [this] { filter_->setKind(kind_->currentData().toString()); });
    connect(status_, &QComboBox::currentIndexChanged, this,
            [this] { filter_->setStatus(status_->currentData().toString()); });
    connect(group_, &QAction::toggled, this, [this](bool on) {
        model_->setGroupBySeed(on);
        view_->setRootIsDecorated(on);
    });
    connect(&store_, &StoreService::runsChanged, model_, &RunTableModel::setRuns);
    connect(&store_, &StoreService::opened, this, &RunsPage::updateActions);
    connect(view_, &QTreeView::activated, this, [this](const QModelIndex& index) {
        const QVariant id = index.data(RunTableModel::RunIdRole);
        if (id.isValid()) emit openRun(id.toLongLong());
    });
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsPage::updateActions);
    connect(filter_, &QAbstractItemModel::rowsInserted, this, &RunsPage::updateActions);
    connect(filter_, &QAbstractItemModel::modelReset, this, &RunsPage::updateActions);
    connect(filter_, &QAbstractItemModel::layoutChanged, this, &RunsPage::updateActions);
    connect(compare_, &QAction::triggered, this, [this] { emit compareRuns(selectedRuns()); });
    connect(report_, &QAction::triggered, this, [this] { emit exportReport(selectedRuns()); });
    connect(delete_, &QAction::triggered, this, &RunsPage::confirmDelete);
    connect(rename_, &QAction::triggered, this, &RunsPage::renameCurrent);
    connect(&store_, &StoreService::editFailed, this,
            [this](const QString& m) { QMessageBox::warning(this, tr("Run store"), m); });
    updateActions();
}

QList<qint64> RunsPage::selectedRuns() const {
    QList<qint64> ids;
    for (const QModelIndex& row : view_->selectionModel()->selectedRows()) {
        for (qint64 id : row.data(RunTableModel::RunIdsRole).value<QList<qint64>>())
            if (!ids.contains(id)) ids.append(id);
    }
    return ids;
}

void RunsPage::selectRuns(const QList<qint64>& ids) {
    QItemSelection selection;
    for (qint64 id : ids) {
        const QModelIndex source = model_->indexOfRun(id);
        const QModelIndex row = filter_->mapFromSource(source);
        if (row.isValid()) selection.select(row, row.siblingAtColumn(RunTableModel::ColumnCount - 1));
    }
    view_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void RunsPage::updateActions() {
    const QList<qint64> ids = selectedRuns();
    // An older schema is not read-only: the first change asks to upgrade it.
    const bool readOnly = store_.info().readOnly;
    compare_->setEnabled(ids.size() >= 2);
    report_->setEnabled(!ids.isEmpty());
    delete_->setEnabled(!ids.isEmpty() && !readOnly);
    rename_->setEnabled(ids.size() == 1 && !readOnly);
    const int shown = filter_->rowCount(), total = model_->rowCount();
    count_->setText(shown == total ? tr("%n run(s)", nullptr, total) : tr("%1 of %2 runs").arg(shown).arg(total));
}

void RunsPage::deleteRuns(const QList<qint64>& ids) { store_.deleteRuns(ids); }

void RunsPage::confirmDelete() {
    const QList<qint64> ids = selectedRuns();
    if (ids.isEmpty()) return;
    const auto answer = QMessageBox::question(
        this, tr("Delete runs"),
        tr("Delete %n run(s) with their steps, evaluations and verdicts? This cannot be undone.", nullptr,
           static_cast<int>(ids.size())),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) return;
    if (!StoreUpgradePrompt::confirm(this, store_, tr("delete %n run(s)", nullptr, static_cast<int>(ids.size()))))
        return;
    deleteRuns(ids);
}

void RunsPage::renameCurrent() {
    const QList<qint64> ids = selectedRuns();
    if (ids.size() != 1) return;
    const QModelIndex source = model_->indexOfRun(ids.front());
    const profiler::RunRow* run = model_->runAt(source);
    if (!run) return;
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Rename run"), tr("New name of run %1:").arg(run->id.value),
                                               QLineEdit::Normal, QString::fromStdString(run->name), &ok)
                             .trimmed();
    if (!ok || name.isEmpty()) return;
    // Asked after the name, right before the write: cancelling leaves the store as it was.
    if (!StoreUpgradePrompt::confirm(this, store_, tr("rename the run"))) return;
    store_.renameRun(run->id.value, name);
}

}  // namespace trainbench::ui
