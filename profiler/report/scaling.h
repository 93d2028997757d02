#pragma once
// How throughput scales with replicas across the runs of a report: each run against the run with
// the fewest replicas (the baseline), and against ideal linear scaling from it.
#include <cstddef>
#include <optional>
#include <vector>

#include "profiler/report/reportdata.h"

namespace trainbench::profiler {

struct ScalingRow {
    size_t run = 0;                     // index into ReportData::runs
    std::optional<int64_t> replicas;    // runs.replicas
    std::optional<double> throughput;   // runs.throughput (samples/s)
    std::optional<double> speedup;      // throughput / the baseline's
    std::optional<double> efficiency;   // speedup / (replicas / the baseline's replicas): 1 is linear
};

struct Scaling {
    bool differs = false;             // the runs differ in replicas or devices: worth a table
    bool curve = false;               // at least two replica counts with a throughput: worth a chart
    std::optional<size_t> baseline;   // index into rows
    std::vector<ScalingRow> rows;     // sorted by replicas (not recorded last), then by run order
};

Scaling scalingOf(const ReportData& data);

}  // namespace trainbench::profiler
