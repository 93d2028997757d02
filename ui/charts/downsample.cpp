#include "ui/charts/downsample.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace trainbench::ui {
namespace {

// Lambdas, not functions: a function's pointer would be called per point instead of inlined (ten
// times slower re-bucketing of a million points).
constexpr auto xOf = [](const QPointF& p) { return p.x(); };
constexpr auto yOf = [](const QPointF& p) { return p.y(); };
bool drawable(const QPointF& p) { return std::isfinite(p.x()) && std::isfinite(p.y()); }

}  // namespace

IndexRange visibleRange(std::span<const QPointF> points, double xMin, double xMax) {
    return profiler::visibleRange(points, xMin, xMax, xOf);
}

QList<QPointF> minMaxDownsample(std::span<const QPointF> points, double xMin, double xMax, int buckets) {
    QList<QPointF> out;
    if (points.empty()) return out;
    if (xMax < xMin) std::swap(xMin, xMax);
    const IndexRange range = visibleRange(points, xMin, xMax);

    // The nearest drawable neighbours outside the range, so the line runs to the plot's edges.
    std::optional<size_t> before, after;
    for (size_t i = range.begin; i-- > 0;)
        if (drawable(points[i])) { before = i; break; }
    for (size_t i = range.end; i < points.size(); ++i)
        if (drawable(points[i])) { after = i; break; }

    const profiler::MinMaxOptions options{.buckets = size_t(std::max(buckets, 1)),
                                          .by = profiler::Bucketing::EqualWidth,
                                          .xMin = xMin,
                                          .xMax = xMax,
                                          .keep_ends = true};
    const std::vector<size_t> kept = profiler::minMaxIndices(points, range, options, xOf, yOf);
    out.reserve(qsizetype(kept.size()) + 2);
    if (before) out.append(points[*before]);
    for (const size_t i : kept) out.append(points[i]);
    if (after) out.append(points[*after]);
    return out;
}

}  // namespace trainbench::ui
