#pragma once
// Live dashboard of one run, running or finished: loss and accuracy against step or wall time,
// throughput, the stacked step-time breakdown, memory against the device's limit, the verdict card
// with its actions, progress and ETA, and Stop. Fed by the store reader; never reads the store.
#include <QElapsedTimer>
#include <QPair>
#include <QWidget>

#include "ui/pages/dashboard/runhistory.h"
#include "ui/store/storesnapshot.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QStackedWidget;

namespace trainbench::ui {

class BreakdownChart;
class MemoryBar;
class RankBars;
class ServeView;
class StoreService;
class TimeSeriesChart;
class VerdictCard;

class DashboardPage : public QWidget {
    Q_OBJECT
public:
    explicit DashboardPage(StoreService& store, QWidget* parent = nullptr);

    // Follows the run (0: none).
    void showRun(qint64 id);
    qint64 runId() const { return runId_; }
    const RunHistory& history() const { return history_; }
    void setXAxis(XAxis x);

    TimeSeriesChart* lossChart() const { return loss_; }
    TimeSeriesChart* accuracyChart() const { return accuracy_; }
    TimeSeriesChart* throughputChart() const { return throughput_; }
    BreakdownChart* breakdownChart() const { return breakdown_; }
    MemoryBar* memoryBar() const { return memory_; }
    RankBars* rankBars() const { return ranks_; }
    VerdictCard* verdictCard() const { return verdict_; }
    QPushButton* stopButton() const { return stop_; }
    QLabel* statusLabel() const { return status_; }
    // A load test (kind "serve") is shown here instead of the training charts.
    ServeView* serveView() const { return serve_; }
    bool showsServeView() const;

signals:
    // "Try it": the run's experiment with action `number`'s changes, as JSON text.
    void tryExperiment(const QString& json);
    void failed(const QString& message);

private:
    void onUpdate(const RunUpdatePtr& update);
    void refreshCharts(size_t firstNew, bool whole);
    void refreshHeader();
    // Shows the charts that mean something for the run's kind (train, predict, serve).
    void arrangeForKind();
    void onTryAction(int number);
    void stopRun();

    StoreService& store_;
    qint64 runId_ = 0;
    RunHistory history_;
    XAxis x_ = XAxis::Step;
    QElapsedTimer breakdownAge_;
    QString shownVerdict_;
    QPair<double, double> linkedRange_{0.0, 0.0};  // the zoom last spread to the linked charts  // what the card shows: the run's status and verdict column

    QLabel* title_ = nullptr;
    QLabel* status_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* eta_ = nullptr;
    QPushButton* stop_ = nullptr;
    QComboBox* xAxis_ = nullptr;
    TimeSeriesChart* loss_ = nullptr;
    TimeSeriesChart* accuracy_ = nullptr;
    TimeSeriesChart* throughput_ = nullptr;
    BreakdownChart* breakdown_ = nullptr;
    MemoryBar* memory_ = nullptr;
    RankBars* ranks_ = nullptr;
    VerdictCard* verdict_ = nullptr;
    QWidget* trainCharts_ = nullptr;
    ServeView* serve_ = nullptr;
    QStackedWidget* body_ = nullptr;
    std::string kind_;  // the kind the page is arranged for
};

}  // namespace trainbench::ui
