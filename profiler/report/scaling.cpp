#include "profiler/report/scaling.h"

#include <algorithm>
#include <set>

namespace trainbench::profiler {

Scaling scalingOf(const ReportData& data) {
    Scaling s;
    std::set<int64_t> replicaCounts, measured;
    std::set<std::string> devices;
    for (size_t i = 0; i < data.runs.size(); ++i) {
        const RunRow& r = data.runs[i].run;
        s.rows.push_back({i, r.replicas, r.throughput, std::nullopt, std::nullopt});
        replicaCounts.insert(r.replicas.value_or(-1));
        devices.insert(r.devices);
        if (r.replicas && *r.replicas > 0 && r.throughput && *r.throughput > 0) measured.insert(*r.replicas);
    }
    s.differs = replicaCounts.size() > 1 || devices.size() > 1;
    s.curve = measured.size() > 1;
    std::stable_sort(s.rows.begin(), s.rows.end(), [](const ScalingRow& a, const ScalingRow& b) {
        return a.replicas.value_or(INT64_MAX) < b.replicas.value_or(INT64_MAX);
    });
    for (size_t k = 0; k < s.rows.size(); ++k) {
        const ScalingRow& r = s.rows[k];
        if (r.replicas && *r.replicas > 0 && r.throughput && *r.throughput > 0) {
            s.baseline = k;
            break;
        }
    }
    if (!s.baseline) return s;
    const ScalingRow base = s.rows[*s.baseline];
    for (ScalingRow& r : s.rows) {
        if (!r.replicas || *r.replicas <= 0 || !r.throughput) continue;
        r.speedup = *r.throughput / *base.throughput;
        r.efficiency = *r.speedup / (static_cast<double>(*r.replicas) / static_cast<double>(*base.replicas));
    }
    return s;
}

}  // namespace trainbench::profiler
