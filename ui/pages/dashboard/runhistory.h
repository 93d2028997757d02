#pragma once
// Everything the dashboard shows about one run, accumulated from the store reader's updates: the
// step and evaluation series at full resolution, the breakdown, memory, plan and verdict. Pure
// data on the GUI thread; charts get views of it (appends for a live run, whole series on reset).
#include <QPointF>
#include <QString>

#include <optional>
#include <string>
#include <vector>

#include "ui/charts/breakdowndata.h"
#include "ui/charts/memorybar.h"
#include "ui/charts/rankbars.h"
#include "ui/charts/series.h"
#include "ui/store/storesnapshot.h"

namespace trainbench::ui {

// Cost: the run's price per second (devices and host) times its training time.
enum class XAxis { Step, WallTime, Cost };

struct Progress {
    int64_t step = 0;
    int64_t total = 0;               // planned steps (plan.total_steps); 0 when unknown
    double fraction = 0.0;           // step / total
    std::optional<double> etaSeconds;  // at the recent pace, evaluations included
};

class RunHistory {
public:
    // Applies an update; returns the index of the first new step (0 after a reset).
    size_t apply(const RunUpdate& update);

    bool empty() const { return steps_.empty(); }
    const profiler::RunRow& row() const { return row_; }
    const std::vector<profiler::StepSample>& steps() const { return steps_; }
    const std::vector<profiler::EvalSample>& evals() const { return evals_; }
    const std::optional<profiler::Verdict>& verdict() const { return verdict_; }
    std::optional<std::string> attribute(const std::string& key) const;
    const std::vector<std::pair<std::string, std::string>>& attributes() const { return attributes_; }
    // A load test's points (kind "serve"), whole as of the last update.
    const std::vector<profiler::LoadTestPoint>& loadTestPoints() const { return points_; }
    // Their serving verdict, classified by the store reader (nullopt: no point yet, or not a load test).
    const std::optional<profiler::ServingVerdict>& servingVerdict() const { return servingVerdict_; }

    // Points of steps [from, end) against x: training loss, samples/s.
    std::vector<QPointF> lossPoints(XAxis x, size_t from = 0) const;
    std::vector<QPointF> throughputPoints(XAxis x, size_t from = 0) const;
    // Test evaluations: accuracy (0..1) and loss.
    std::vector<QPointF> accuracyPoints(XAxis x, const std::string& split = "test") const;
    std::vector<QPointF> evalLossPoints(XAxis x, const std::string& split = "test") const;

    BreakdownDataPtr breakdown() const;
    // From the memory.* attributes; no parts when the run recorded none.
    MemoryFootprint memory() const;
    // Each rank's mean step over the last 500 steps, labelled by what the rank is ("stage 1",
    // "device 0", "replica 3", "worker 2"); empty for one device.
    std::vector<RankParts> rankParts() const;
    // What the ranks are: "stage", "device", "replica" or "worker".
    QString rankNoun() const;
    Progress progress() const;

private:
    profiler::RunRow row_;
    std::vector<profiler::StepSample> steps_;
    std::vector<profiler::EvalSample> evals_;
    std::vector<std::pair<std::string, std::string>> attributes_;
    std::optional<profiler::Verdict> verdict_;
    std::vector<profiler::LoadTestPoint> points_;
    std::optional<profiler::ServingVerdict> servingVerdict_;
    std::vector<profiler::ReplicaMean> replicaMeans_;
};

}  // namespace trainbench::ui
