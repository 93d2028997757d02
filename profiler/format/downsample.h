#pragma once
// The one min/max downsampler: which points of a long series a chart draws so that every spike
// survives. The GUI's charts (ui/charts/downsample.h, re-bucketed on every zoom) and the report's
// charts (profiler/report/reportcharts.cpp) both call it; each adapts its own point type through
// two accessors. Header-only so the GUI's redraw of a million-point series inlines the loop.
//
// Points are sorted by x. The result is indices into the points, ascending and distinct: each
// bucket's lowest and highest drawable point, in their x order.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

namespace trainbench::profiler {

// Indices [begin, end) of a span of points.
struct IndexRange {
    size_t begin = 0;
    size_t end = 0;
    size_t size() const { return end - begin; }
};

// The points whose x lies in [xMin, xMax] (bounds in either order), as an index range. O(log n).
template <class Point, class XOf>
IndexRange visibleRange(std::span<const Point> points, double xMin, double xMax, XOf x) {
    if (xMax < xMin) std::swap(xMin, xMax);
    const auto lo = std::lower_bound(points.begin(), points.end(), xMin,
                                     [&](const Point& p, double v) { return x(p) < v; });
    const auto hi = std::upper_bound(lo, points.end(), xMax, [&](double v, const Point& p) { return v < x(p); });
    return {size_t(lo - points.begin()), size_t(hi - points.begin())};
}

enum class Bucketing {
    EqualCount,  // consecutive points in groups whose sizes differ by at most one (a report's curve)
    EqualWidth,  // [xMin, xMax] cut into equal x-widths (a chart's visible range: buckets are pixels)
};

struct MinMaxOptions {
    size_t buckets = 200;
    Bucketing by = Bucketing::EqualCount;
    double xMin = 0.0, xMax = 0.0;  // EqualWidth only
    // Also keep the range's first and last drawable point (the line reaches both ends of the range).
    bool keep_ends = false;
    // A point with a non-finite y (a diverged loss): with gaps, a bucket with no finite point keeps
    // its first point, which the chart draws as a break in the line, and a short range comes back
    // whole; without, such points are never kept.
    bool gaps = false;
};

// At most 2 × buckets (+ 2 with keep_ends) indices; a range of that many points or fewer comes
// back whole (its drawable points). O(range).
template <class Point, class XOf, class YOf>
std::vector<size_t> minMaxIndices(std::span<const Point> points, IndexRange range, const MinMaxOptions& options,
                                  XOf x, YOf y) {
    std::vector<size_t> out;
    const size_t buckets = std::max<size_t>(options.buckets, 1);
    auto drawable = [&](size_t i) { return std::isfinite(x(points[i])) && std::isfinite(y(points[i])); };
    // Indices arrive in order; a point that is both a bucket's extreme and an end is kept once.
    auto keep = [&](size_t i) {
        if (out.empty() || out.back() < i) out.push_back(i);
    };
    const size_t n = range.size();
    if (n <= 2 * buckets + (options.keep_ends ? 2 : 0)) {
        out.reserve(n);
        for (size_t i = range.begin; i < range.end; ++i)
            if (options.gaps || drawable(i)) keep(i);
        return out;
    }
    out.reserve(2 * buckets + 2);

    // Bucket of the point at index i, non-decreasing in i. The options are copied into locals so
    // that the loop keeps them in registers (the GUI re-buckets a million points per zoom).
    const bool equalCount = options.by == Bucketing::EqualCount;
    const bool gaps = options.gaps, keepEnds = options.keep_ends;
    double xMin = options.xMin, xMax = options.xMax;
    if (xMax < xMin) std::swap(xMin, xMax);
    const double scale = xMax > xMin ? double(buckets) / (xMax - xMin) : 0.0;
    // Bucket k holds [k·n/B, (k+1)·n/B): the k with k·n/B ≤ j, i.e. ⌈(j+1)·B/n⌉ − 1.
    auto byCount = [&](size_t i) -> size_t { return ((i - range.begin + 1) * buckets + n - 1) / n - 1; };
    auto byWidth = [&](size_t i) -> size_t {
        const double b = (x(points[i]) - xMin) * scale;
        return b <= 0.0 ? 0 : std::min(size_t(b), buckets - 1);
    };

    const size_t none = range.end;
    size_t last = none;     // the last drawable point seen
    size_t bucket = buckets;  // none yet
    size_t first = none;    // the current bucket's first point
    size_t lo = none, hi = none;
    double loY = 0.0, hiY = 0.0;
    auto flush = [&] {
        if (bucket == buckets) return;
        if (lo == none) {
            if (gaps) keep(first);
            return;
        }
        keep(std::min(lo, hi));
        keep(std::max(lo, hi));
    };
    // One loop per bucketing, each compiled without the other's branch.
    auto scan = [&](auto bucketOf) {
        for (size_t i = range.begin; i < range.end; ++i) {
            const bool ok = drawable(i);
            if (!ok && !gaps) continue;
            const size_t b = bucketOf(i);
            if (b != bucket) {
                flush();
                bucket = b;
                first = i;
                lo = hi = none;
            }
            if (!ok) continue;
            if (keepEnds && last == none) keep(i);
            last = i;
            const double v = y(points[i]);
            if (lo == none) {
                lo = hi = i;
                loY = hiY = v;
            } else if (v < loY) {
                lo = i;
                loY = v;
            } else if (v > hiY) {
                hi = i;
                hiY = v;
            }
        }
    };
    if (equalCount)
        scan(byCount);
    else
        scan(byWidth);
    flush();
    if (options.keep_ends && last != range.end) keep(last);
    return out;
}

}  // namespace trainbench::profiler
