#pragma once
// Inference: every load test of the store (runs of kind "serve"), or those of one served model.
// One latency–throughput curve per server configuration (precision, max batch size, batch
// timeout, instances), a table of the configurations side by side (precision, best QPS, p50 and
// p99 there, cost per million predictions where the run has a price) and the selected
// configuration's verdict. It follows the serve runs through the store reader, so a load test
// that is running adds its points as they are measured.
#include <QWidget>

#include <map>

#include "ui/store/storesnapshot.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QTableWidget;

namespace trainbench::ui {

class StoreService;
class TimeSeriesChart;
class VerdictCard;

class InferencePage : public QWidget {
    Q_OBJECT
public:
    explicit InferencePage(StoreService& store, QWidget* parent = nullptr);

    // One configuration's load tests merged: its curve and best point.
    struct Configuration {
        QString label;   // configurationLabel, prefixed with the model when several are shown
        QString legend;  // compactConfigurationLabel, likewise: the curve's name
        QString precision;
        std::vector<qint64> runs;  // newest first
        std::vector<profiler::LoadTestPoint> points;
        profiler::RunRow newest;
        double instancesPerQuery = 1.0;
        // The newest load test's measure of the model as served (serve.weight_bytes, …): when MODEL was a run.
        std::optional<double> weightBytes, fp32WeightBytes, accuracy, fp32Accuracy, testExamples;
        QString calibration;
    };

    const std::vector<Configuration>& configurations() const { return configs_; }
    TimeSeriesChart* curveChart() const { return chart_; }
    QTableWidget* table() const { return table_; }
    QComboBox* modelFilter() const { return model_; }
    // The p99 bound the best point must meet (0: none, the highest QPS wins).
    QDoubleSpinBox* boundBox() const { return bound_; }
    VerdictCard* verdictCard() const { return verdict_; }
    // How many serve runs the page has received whole (tests).
    int runsReceived() const { return static_cast<int>(updates_.size()); }

signals:
    // Double-click on a configuration: its newest run on the dashboard.
    void openRun(qint64 id);

private:
    void onRuns(const RunListPtr& runs);
    void onUpdate(const RunUpdatePtr& update);
    void scheduleRebuild();
    void rebuild();
    void showVerdictOf(int row);

    StoreService& store_;
    std::map<qint64, RunUpdatePtr> updates_;  // the serve runs followed, latest update each
    std::vector<Configuration> configs_;
    bool rebuildPending_ = false;

    QComboBox* model_ = nullptr;
    QComboBox* percentile_ = nullptr;
    QDoubleSpinBox* bound_ = nullptr;
    bool boundTouched_ = false;  // the user set the bound: recorded bounds no longer set it
    QLabel* empty_ = nullptr;
    TimeSeriesChart* chart_ = nullptr;
    QTableWidget* table_ = nullptr;
    VerdictCard* verdict_ = nullptr;
};

}  // namespace trainbench::ui
