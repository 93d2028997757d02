#pragma once
// Long series cut down to a few hundred points for a chart, keeping what a reader looks for.
#include <cstddef>
#include <vector>

#include "profiler/report/chart.h"

namespace trainbench::profiler {

// Consecutive points in `buckets` groups; each group gives its lowest and highest point, in their
// order, so spikes survive (a loss curve's noise band): profiler/format/downsample.h's min/max
// downsampler with equal-count buckets. At most 2 × buckets points; a series that is already short
// enough comes back as it is. NaN points are left out of a group's extremes; a group of NaNs only
// gives its first point (a gap).
std::vector<ChartPoint> minMaxBuckets(const std::vector<ChartPoint>& points, size_t buckets);

// Consecutive points in `buckets` groups; each group gives the mean of its x and of its y: a steady
// level (throughput, step-time parts). At most `buckets` points.
std::vector<ChartPoint> meanBuckets(const std::vector<ChartPoint>& points, size_t buckets);

}  // namespace trainbench::profiler
