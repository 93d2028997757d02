#pragma once
// Compare page, for two or more runs: convergence overlay (accuracy or loss against step or wall
// time; runs that differ only by seed drawn as their mean with a min–max band), scaling
// (throughput and time to target against replicas, with the ideal line and efficiency), the
// outcomes, breakdowns and verdicts side by side, and the config diff.
#include <QList>
#include <QWidget>

#include <map>

#include "ui/pages/dashboard/runhistory.h"
#include "ui/store/storesnapshot.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QTableView;

namespace trainbench::ui {

class CompareSummaryModel;
class ConfigDiffModel;
class ScalingChart;
class StoreService;
class TimeSeriesChart;

class ComparePage : public QWidget {
    Q_OBJECT
public:
    enum class Metric { TestAccuracy, TestLoss, TrainingLoss };

    explicit ComparePage(StoreService& store, QWidget* parent = nullptr);

    void compare(const QList<qint64>& ids);
    const QList<qint64>& runs() const { return ids_; }
    void setMetric(Metric m);
    void setXAxis(XAxis x);
    void setGroupSeeds(bool on);

    TimeSeriesChart* convergenceChart() const { return convergence_; }
    ScalingChart* scalingChart() const { return scaling_; }
    ConfigDiffModel* configModel() const { return config_; }
    CompareSummaryModel* summaryModel() const { return summary_; }

private:
    void setCostSelectable(bool on);
    void onUpdate(const RunUpdatePtr& update);
    void rebuild();
    void rebuildConvergence();

    StoreService& store_;
    QList<qint64> ids_;
    std::map<qint64, RunHistory> runs_;
    Metric metric_ = Metric::TestAccuracy;
    XAxis x_ = XAxis::Step;
    bool groupSeeds_ = true;
    bool pending_ = false;

    QLabel* title_ = nullptr;
    QComboBox* metricBox_ = nullptr;
    QComboBox* xBox_ = nullptr;
    QCheckBox* seedsBox_ = nullptr;
    QComboBox* scalingMode_ = nullptr;
    QCheckBox* differencesOnly_ = nullptr;
    TimeSeriesChart* convergence_ = nullptr;
    ScalingChart* scaling_ = nullptr;
    ConfigDiffModel* config_ = nullptr;
    CompareSummaryModel* summary_ = nullptr;
    QTableView* configView_ = nullptr;
    QTableView* summaryView_ = nullptr;
};

}  // namespace trainbench::ui
