#pragma once
// Display decimation of long series: what a chart hands Qt Charts instead of every point, so a
// million-point series redraws in a few milliseconds. The GUI's adapter of the one min/max
// downsampler (profiler/format/downsample.h) to QPointF.
#include <QList>
#include <QPointF>

#include <span>

#include "profiler/format/downsample.h"

namespace trainbench::ui {

using profiler::IndexRange;

// Indices [begin, end) of the points whose x lies in [xMin, xMax]; points sorted by x. O(log n).
IndexRange visibleRange(std::span<const QPointF> points, double xMin, double xMax);

// Min/max per bucket over [xMin, xMax] cut into `buckets` equal x-widths: the range's first and
// last point, each bucket's lowest and highest point (in x order), and the nearest point outside
// each end so the line reaches the plot's edges. When the range holds few points (≤ 2 per
// bucket) they are all returned. Points with a NaN or infinite y are skipped. At most
// 2 * buckets + 4 points; O(log n + visible).
QList<QPointF> minMaxDownsample(std::span<const QPointF> points, double xMin, double xMax, int buckets);

}  // namespace trainbench::ui
