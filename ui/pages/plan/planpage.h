#pragma once
// Plan page: given a target accuracy, a deadline and a budget, the configurations of the store
// (seed groups of runs, measured or emulated) — or the points of a sweep, projected where they have
// no runs — ranked by time or cost to the target, each marked against the deadline and the budget,
// in a table and on a time-against-cost scatter. The runs are read by the store reader
// (StoreService::requestTimeToAccuracy) and the sweep estimated by PlanProjector, both off the GUI
// thread; ranking them (app::sweepCandidates, profiler::rankPlan) is quick and done here.
#include <QWidget>

#include "app/plan/pointestimate.h"
#include "profiler/plan/plan.h"
#include "ui/store/storesnapshot.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QTabWidget;
class QTableView;
class QTimer;

namespace trainbench::ui {

class LayoutsView;
class PlanChart;
class PlanProjector;
class PlanTableModel;
class StoreService;
struct ProjectionInput;

class PlanPage : public QWidget {
    Q_OBJECT
public:
    explicit PlanPage(StoreService& store, QWidget* parent = nullptr);

    void setTarget(double fraction);
    double target() const;
    void setDeadline(const QString& text);  // "2h", "45m"; empty: none
    void setBudget(const QString& text);    // "5", "$5"; empty: none
    void setOrder(profiler::PlanOrder order);
    void setWithPretraining(bool on);
    // A sweep whose points without runs are projected; empty: the store's configurations.
    void setExperimentFile(const QString& path);
    // Reads the runs again.
    void refresh();

    // The Layouts tab: how to split a model over GPUs (layout planner).
    LayoutsView* layoutsView() const { return layouts_; }
    void showLayouts(bool on);
    PlanTableModel* tableModel() const { return model_; }
    PlanChart* chart() const { return chart_; }
    QString summaryText() const;
    QString problemText() const;  // what is wrong with the inputs or the sweep; empty when nothing
    // Waiting for the store or the sweep's estimate (tests).
    bool busy() const { return awaitingRuns_ != 0 || awaitingProjection_; }

signals:
    void planChanged();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void requestRuns();
    void onRuns(const TtaSnapshotPtr& snapshot);
    void onProjection(const ProjectionInput& input);
    void rebuild();
    void chooseExperiment();

    StoreService& store_;
    PlanProjector* projector_ = nullptr;
    TtaSnapshotPtr runs_;
    std::vector<app::PointEstimate> points_;
    QString projectionError_;
    quint64 awaitingRuns_ = 0;  // the request whose answer is wanted; 0: none
    bool awaitingProjection_ = false;
    bool stale_ = true;          // the store changed since the last read
    bool targetTouched_ = false; // the user set a target: the store's runs no longer suggest one

    QTabWidget* tabs_ = nullptr;
    LayoutsView* layouts_ = nullptr;
    QDoubleSpinBox* target_ = nullptr;
    QLineEdit* deadline_ = nullptr;
    QLineEdit* budget_ = nullptr;
    QComboBox* order_ = nullptr;
    QCheckBox* pretraining_ = nullptr;
    QLineEdit* experiment_ = nullptr;
    QLabel* problem_ = nullptr;
    QLabel* summary_ = nullptr;
    QTimer* debounce_ = nullptr;
    PlanTableModel* model_ = nullptr;
    QTableView* table_ = nullptr;
    PlanChart* chart_ = nullptr;
};

}  // namespace trainbench::ui
