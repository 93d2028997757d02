#include "profiler/report/downsample.h"

#include "profiler/format/downsample.h"

#include <cmath>
#include <limits>

namespace trainbench::profiler {

namespace {

// Bucket k holds points [begin(k), begin(k + 1)): sizes differ by at most one.
size_t begin(size_t k, size_t n, size_t buckets) { return k * n / buckets; }

}  // namespace

std::vector<ChartPoint> minMaxBuckets(const std::vector<ChartPoint>& points, size_t buckets) {
    if (buckets == 0 || points.size() <= 2 * buckets) return points;
    const std::span<const ChartPoint> all(points);
    const MinMaxOptions options{.buckets = buckets, .by = Bucketing::EqualCount, .gaps = true};
    const auto kept = minMaxIndices(
        all, IndexRange{0, all.size()}, options, [](const ChartPoint& p) { return p.x; },
        [](const ChartPoint& p) { return p.y; });
    std::vector<ChartPoint> out;
    out.reserve(kept.size());
    for (const size_t i : kept) out.push_back(points[i]);
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
