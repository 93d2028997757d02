#pragma once
// Compare page, for two or more runs: convergence overlay (accuracy or loss against step or wall
// time; runs that differ only by seed drawn as their mean with a min–max band), scaling
// (throughput and time to target against replicas, with the ideal line and efficiency), data
// scaling (test error or loss against training examples, when the runs differ in data.fraction,
// with the power law fitted), the outcomes, breakdowns and verdicts side by side, and the config diff.
#include <QList>
#include <QWidget>

#include <map>

#include "profiler/compare/datascaling.h"
#include "ui/pages/dashboard/runhistory.h"
#include "ui/store/storesnapshot.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QTableView;
class QTabWidget;

namespace trainbench::ui {

class CompareSummaryModel;
class ConfigDiffModel;
class DataScalingChart;
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
    // Load tests (runs of kind "serve"): one latency–throughput curve (p99) per compared run.
    TimeSeriesChart* latencyChart() const { return latency_; }
    DataScalingChart* dataScalingChart() const { return dataScaling_; }
    // The data-scaling tab is enabled when the compared runs trained on different numbers of examples.
    bool dataScalingAvailable() const;
    bool dataScalingShown() const;  // its tab is the current one
    void setDataScalingMetric(profiler::DataScalingMetric metric);
    ConfigDiffModel* configModel() const { return config_; }
    CompareSummaryModel* summaryModel() const { return summary_; }

private:
    void setCostSelectable(bool on);
    void onUpdate(const RunUpdatePtr& update);
    void rebuild();
    void rebuildConvergence();
    void rebuildDataScaling();
    void rebuildLatency();

    StoreService& store_;
    QList<qint64> ids_;
    std::map<qint64, RunHistory> runs_;
    Metric metric_ = Metric::TestAccuracy;
    XAxis x_ = XAxis::Step;
    bool groupSeeds_ = true;
    bool pending_ = false;
    profiler::DataScalingMetric dataMetric_ = profiler::DataScalingMetric::TestError;
    bool dataDiffered_ = false;  // the last rebuild's runs differed in dataset size

    QLabel* title_ = nullptr;
    QComboBox* metricBox_ = nullptr;
    QComboBox* xBox_ = nullptr;
    QCheckBox* seedsBox_ = nullptr;
    QComboBox* scalingMode_ = nullptr;
    QCheckBox* differencesOnly_ = nullptr;
    TimeSeriesChart* convergence_ = nullptr;
    TimeSeriesChart* latency_ = nullptr;
    ScalingChart* scaling_ = nullptr;
    QTabWidget* scalingTabs_ = nullptr;  // devices | data
    QComboBox* dataMetricBox_ = nullptr;
    DataScalingChart* dataScaling_ = nullptr;
    QLabel* fitLabel_ = nullptr;
    ConfigDiffModel* config_ = nullptr;
    CompareSummaryModel* summary_ = nullptr;
    QTableView* configView_ = nullptr;
    QTableView* summaryView_ = nullptr;
};

}  // namespace trainbench::ui
