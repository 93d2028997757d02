#pragma once
// Scaling arithmetic behind ScalingChart: for each curve (e.g. a strategy), the throughput a
// perfect linear scale-up from its smallest device count would give, and the efficiency of each
// measured point against it; the same for time to the accuracy target. Pure functions.
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace trainbench::ui {

// One measured run (or the mean of repeats) at a device or worker count.
struct ScalingPoint {
    int devices = 1;
    double throughput = 0.0;                    // samples/s
    std::optional<double> timeToTargetSeconds;  // when the run reached the accuracy target
    QString series;  // the curve it belongs to, e.g. "mirrored"; empty: one unnamed curve
    QString label;   // what the tooltip calls it, e.g. the run's name
};

struct ScalingRow {
    QString series;
    int devices = 1;
    int runs = 0;          // points averaged into this row (repeats at the same count)
    QStringList labels;
    double throughput = 0.0;
    double ideal = 0.0;       // throughput(n0) * devices / n0, n0 the curve's smallest count
    double efficiency = 0.0;  // throughput / ideal (1 = linear scaling)
    std::optional<double> timeToTarget;    // mean over the runs that reached the target
    std::optional<double> idealTime;       // time(n0') * n0' / devices, n0' the smallest count with a time
    std::optional<double> timeEfficiency;  // idealTime / timeToTarget
};

// Rows per curve (curves in order of first appearance) and device count (ascending); points at
// the same count are averaged. Points with devices < 1 or a non-positive throughput are skipped.
std::vector<ScalingRow> scalingRows(const std::vector<ScalingPoint>& points);

}  // namespace trainbench::ui
