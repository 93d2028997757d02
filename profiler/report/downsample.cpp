#include "profiler/report/downsample.h"

#include <cmath>
#include <limits>

namespace trainbench::profiler {

namespace {

// Bucket k holds points [begin(k), begin(k + 1)): sizes differ by at most one.
size_t begin(size_t k, size_t n, size_t buckets) { return k * n / buckets; }

}  // namespace

std::vector<ChartPoint> minMaxBuckets(const std::vector<ChartPoint>& points, size_t buckets) {
    const size_t n = points.size();
    if (buckets == 0 || n <= 2 * buckets) return points;
    std::vector<ChartPoint> out;
    out.reserve(2 * buckets);
    for (size_t k = 0; k < buckets; ++k) {
        size_t lo = n, hi = n;
        for (size_t i = begin(k, n, buckets); i < begin(k + 1, n, buckets); ++i) {
            if (!std::isfinite(points[i].y)) continue;
            if (lo == n || points[i].y < points[lo].y) lo = i;
            if (hi == n || points[i].y > points[hi].y) hi = i;
        }
        if (lo == n) {
            out.push_back({points[begin(k, n, buckets)].x, std::numeric_limits<double>::quiet_NaN()});
        } else if (lo == hi) {
            out.push_back(points[lo]);
        } else {
            out.push_back(points[std::min(lo, hi)]);
            out.push_back(points[std::max(lo, hi)]);
        }
    }
    return out;
}

std::vector<ChartPoint> meanBuckets(const std::vector<ChartPoint>& points, size_t buckets) {
    const size_t n = points.size();
    if (buckets == 0 || n <= buckets) return points;
    std::vector<ChartPoint> out;
    out.reserve(buckets);
    for (size_t k = 0; k < buckets; ++k) {
        double x = 0, y = 0;
        size_t count = 0, finite = 0;
        for (size_t i = begin(k, n, buckets); i < begin(k + 1, n, buckets); ++i) {
            x += points[i].x;
            ++count;
            if (std::isfinite(points[i].y)) {
                y += points[i].y;
                ++finite;
            }
        }
        if (count == 0) continue;
        out.push_back({x / static_cast<double>(count),
                       finite ? y / static_cast<double>(finite) : std::numeric_limits<double>::quiet_NaN()});
    }
    return out;
}

}  // namespace trainbench::profiler
