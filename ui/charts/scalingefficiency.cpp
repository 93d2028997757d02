#include "ui/charts/scalingefficiency.h"

#include <algorithm>
#include <cmath>

namespace trainbench::ui {
namespace {

void fillIdeal(std::vector<ScalingRow>& curve) {
    // Rows are sorted by devices: the first is the base of the ideal line.
    const ScalingRow& base = curve.front();
    for (ScalingRow& r : curve) {
        r.ideal = base.throughput * r.devices / base.devices;
        r.efficiency = r.ideal > 0 ? r.throughput / r.ideal : 0.0;
    }
    const auto timed = std::find_if(curve.begin(), curve.end(), [](const ScalingRow& r) { return r.timeToTarget; });
    if (timed == curve.end()) return;
    const double work = *timed->timeToTarget * timed->devices;  // device-seconds at the base
    for (ScalingRow& r : curve) {
        if (r.devices < timed->devices) continue;
        r.idealTime = work / r.devices;
        if (r.timeToTarget && *r.timeToTarget > 0) r.timeEfficiency = *r.idealTime / *r.timeToTarget;
    }
}

}  // namespace

std::vector<ScalingRow> scalingRows(const std::vector<ScalingPoint>& points) {
    std::vector<QString> order;
    for (const ScalingPoint& p : points)
        if (std::find(order.begin(), order.end(), p.series) == order.end()) order.push_back(p.series);

    std::vector<ScalingRow> out;
    for (const QString& name : order) {
        struct Sum {
            ScalingRow row;
            double throughput = 0.0, time = 0.0;
            int timedRuns = 0;
        };
        std::vector<Sum> sums;
        for (const ScalingPoint& p : points) {
            if (p.series != name || p.devices < 1 || !(p.throughput > 0) || !std::isfinite(p.throughput)) continue;
            auto it = std::find_if(sums.begin(), sums.end(), [&](const Sum& s) { return s.row.devices == p.devices; });
            if (it == sums.end()) {
                sums.push_back({});
                it = sums.end() - 1;
                it->row.series = name;
                it->row.devices = p.devices;
            }
            it->throughput += p.throughput;
            it->row.runs += 1;
            if (!p.label.isEmpty()) it->row.labels << p.label;
            if (p.timeToTargetSeconds && std::isfinite(*p.timeToTargetSeconds)) {
                it->time += *p.timeToTargetSeconds;
                it->timedRuns += 1;
            }
        }
        if (sums.empty()) continue;
        std::vector<ScalingRow> curve;
        for (Sum& s : sums) {
            s.row.throughput = s.throughput / s.row.runs;
            if (s.timedRuns > 0) s.row.timeToTarget = s.time / s.timedRuns;
            curve.push_back(std::move(s.row));
        }
        std::sort(curve.begin(), curve.end(), [](const ScalingRow& a, const ScalingRow& b) { return a.devices < b.devices; });
        fillIdeal(curve);
        out.insert(out.end(), curve.begin(), curve.end());
    }
    return out;
}

}  // namespace trainbench::ui
