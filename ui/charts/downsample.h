#pragma once
// Display decimation of long series: what a chart hands Qt Charts instead of every point, so a
// million-point series redraws in a few milliseconds. Pure functions (Qt Core types only).
#include <QList>
#include <QPointF>

#include <cstddef>
#include <span>

namespace trainbench::ui {

// Indices [begin, end) of the points whose x lies in [xMin, xMax]; points sorted by x. O(log n).
struct IndexRange {
    size_t begin = 0;
    size_t end = 0;
    size_t size() const { return end - begin; }
};
IndexRange visibleRange(std::span<const QPointF> points, double xMin, double xMax);

// Min/max per bucket over [xMin, xMax] cut into `buckets` equal x-widths: the range's first and
// last point, each bucket's lowest and highest point (in x order), and the nearest point outside
// each end so the line reaches the plot's edges. When the range holds few points (≤ 2 per
// bucket) they are all returned. Points with a NaN or infinite y are skipped. At most
// 2 * buckets + 4 points; O(log n + visible).
QList<QPointF> minMaxDownsample(std::span<const QPointF> points, double xMin, double xMax, int buckets);

// Largest-Triangle-Three-Buckets (Steinarsson 2013): `threshold` points that keep the visual
// shape of the whole series; first and last kept. Non-finite points are skipped.
QList<QPointF> lttb(std::span<const QPointF> points, int threshold);

}  // namespace trainbench::ui
