#include "ui/charts/downsample.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace trainbench::ui {
namespace {

bool finite(const QPointF& p) { return std::isfinite(p.x()) && std::isfinite(p.y()); }

// Appends the points at indices of `out` in order, never the same index twice.
class Emitter {
public:
    Emitter(std::span<const QPointF> points, QList<QPointF>& out) : points_(points), out_(out) {}
    void take(size_t i) {
        if (has_last_ && i <= last_) return;
        out_.append(points_[i]);
        last_ = i;
        has_last_ = true;
    }

private:
    std::span<const QPointF> points_;
    QList<QPointF>& out_;
    size_t last_ = 0;
    bool has_last_ = false;
};

}  // namespace

IndexRange visibleRange(std::span<const QPointF> points, double xMin, double xMax) {
    if (xMax < xMin) std::swap(xMin, xMax);
    const auto lo = std::lower_bound(points.begin(), points.end(), xMin,
                                     [](const QPointF& p, double x) { return p.x() < x; });
    const auto hi = std::upper_bound(lo, points.end(), xMax,
                                     [](double x, const QPointF& p) { return x < p.x(); });
    return {size_t(lo - points.begin()), size_t(hi - points.begin())};
}

QList<QPointF> minMaxDownsample(std::span<const QPointF> points, double xMin, double xMax, int buckets) {
    QList<QPointF> out;
    if (points.empty()) return out;
    if (xMax < xMin) std::swap(xMin, xMax);
    buckets = std::max(buckets, 1);
    const IndexRange range = visibleRange(points, xMin, xMax);

    // The nearest drawable neighbours outside the range, so the line runs to the plot's edges.
    std::optional<size_t> before, after;
    for (size_t i = range.begin; i-- > 0;)
        if (finite(points[i])) { before = i; break; }
    for (size_t i = range.end; i < points.size(); ++i)
        if (finite(points[i])) { after = i; break; }

    Emitter emitter(points, out);
    if (before) emitter.take(*before);
    if (range.size() <= 2 * size_t(buckets) + 2) {
        // Few enough to draw them all: full detail.
        out.reserve(qsizetype(range.size()) + 2);
        for (size_t i = range.begin; i < range.end; ++i)
            if (finite(points[i])) emitter.take(i);
    } else {
        out.reserve(2 * buckets + 4);
        const double scale = xMax > xMin ? buckets / (xMax - xMin) : 0.0;
        std::optional<size_t> first, last;
        int bucket = -1;
        size_t lo = 0, hi = 0;
        auto flush = [&] {
            if (bucket < 0) return;
            emitter.take(std::min(lo, hi));
            emitter.take(std::max(lo, hi));
        };
        for (size_t i = range.begin; i < range.end; ++i) {
            const QPointF& p = points[i];
            if (!finite(p)) continue;
            if (!first) {
                first = i;
                emitter.take(i);
            }
            last = i;
            const int b = std::min(int((p.x() - xMin) * scale), buckets - 1);
            if (b != bucket) {
                flush();
                bucket = b;
                lo = hi = i;
            } else if (p.y() < points[lo].y()) {
                lo = i;
            } else if (p.y() > points[hi].y()) {
                hi = i;
            }
        }
        flush();
        if (last) emitter.take(*last);
    }
    if (after) emitter.take(*after);
    return out;
}

QList<QPointF> lttb(std::span<const QPointF> points, int threshold) {
    std::vector<QPointF> clean;
    clean.reserve(points.size());
    std::copy_if(points.begin(), points.end(), std::back_inserter(clean), finite);
    QList<QPointF> out;
    const size_t n = clean.size();
    if (threshold < 3 || size_t(threshold) >= n) {
        out = QList<QPointF>(clean.begin(), clean.end());
        return out;
    }
    out.reserve(threshold);
    out.append(clean.front());
    // Buckets over the points between the first and the last; each keeps the point forming the
    // largest triangle with the previous pick and the next bucket's mean.
    const double every = double(n - 2) / (threshold - 2);
    size_t picked = 0;
    for (int b = 0; b < threshold - 2; ++b) {
        const size_t start = size_t(b * every) + 1;
        const size_t end = std::min(size_t((b + 1) * every) + 1, n - 1);
        const size_t nextStart = end;
        const size_t nextEnd = std::min(size_t((b + 2) * every) + 1, n);
        double meanX = 0.0, meanY = 0.0;
        for (size_t i = nextStart; i < nextEnd; ++i) {
            meanX += clean[i].x();
            meanY += clean[i].y();
        }
        const double count = double(std::max<size_t>(nextEnd - nextStart, 1));
        meanX /= count;
        meanY /= count;
        const QPointF& a = clean[picked];
        double bestArea = -1.0;
        size_t best = start;
        for (size_t i = start; i < end; ++i) {
            const double area = std::abs((a.x() - meanX) * (clean[i].y() - a.y()) -
                                         (a.x() - clean[i].x()) * (meanY - a.y()));
            if (area > bestArea) {
                bestArea = area;
                best = i;
            }
        }
        out.append(clean[best]);
        picked = best;
    }
    out.append(clean.back());
    return out;
}

}  // namespace trainbench::ui
