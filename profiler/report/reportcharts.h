#pragma once
// The report's charts built from the store's records: a run's own (loss, accuracy, step-time
// breakdown, throughput) and, for two runs or more, the comparison (accuracy by step and by
// training time, breakdown by run, scaling, test error by training examples). A chart with nothing
// recorded to show is left out.
#include <vector>

#include "profiler/report/chart.h"
#include "profiler/report/reportdata.h"

namespace trainbench::profiler {

// Points per drawn series: a few hundred are as many as a page can show.
inline constexpr size_t kLossBuckets = 200;       // min and max of each: at most 400 points
inline constexpr size_t kLevelBuckets = 300;      // means: throughput
inline constexpr size_t kBreakdownBuckets = 150;  // means: the stacked step-time parts
inline constexpr size_t kEvalPoints = 400;        // evaluations (min/max buckets beyond)

std::vector<Chart> runCharts(const RunReport& run);
std::vector<Chart> comparisonCharts(const ReportData& data);

}  // namespace trainbench::profiler
