#pragma once
// One load test (a run of kind "serve"): its latency–throughput curve (achieved QPS against p50
// and p99), its per-second series (QPS, p50, p99 over the test, growing while it runs) and where a
// query's time went at its best point. Fed whole RunUpdates by the dashboard; never reads the store.
#include <QWidget>

#include "ui/store/storesnapshot.h"

class QLabel;

namespace trainbench::ui {

class LatencyBars;
class TimeSeriesChart;

class ServeView : public QWidget {
    Q_OBJECT
public:
    explicit ServeView(QWidget* parent = nullptr);

    void setRun(const RunUpdate& update);
    void clear();

    TimeSeriesChart* curveChart() const { return curve_; }
    TimeSeriesChart* qpsChart() const { return qps_; }
    TimeSeriesChart* latencyChart() const { return latency_; }
    LatencyBars* breakdownBars() const { return bars_; }
    QLabel* summaryLabel() const { return summary_; }

private:
    QLabel* summary_ = nullptr;
    TimeSeriesChart* curve_ = nullptr;
    TimeSeriesChart* qps_ = nullptr;
    TimeSeriesChart* latency_ = nullptr;
    LatencyBars* bars_ = nullptr;
};

}  // namespace trainbench::ui
