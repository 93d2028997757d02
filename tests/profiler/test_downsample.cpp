// The one min/max downsampler (profiler/format/downsample.h) that the GUI's charts and the report's
// charts both call: every bucket keeps its extremes, found here by brute force, whichever way the
// buckets are cut; gaps and ends behave as each caller asks.
#include "profiler/format/downsample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

using namespace trainbench::profiler;

namespace {

struct P {
    double x, y;
};

std::vector<P> noisy(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0.0, 1.0);
    std::vector<P> p;
    for (size_t i = 0; i < n; ++i) p.push_back({double(i), std::sin(double(i) / 300.0) + 0.3 * noise(rng)});
    return p;
}

double x(const P& p) { return p.x; }
double y(const P& p) { return p.y; }

std::vector<size_t> indices(const std::vector<P>& p, const MinMaxOptions& o) {
    return minMaxIndices(std::span<const P>(p), IndexRange{0, p.size()}, o, x, y);
}

// For each bucket (given by `bucketOf`), the indices of its lowest and highest finite point.
template <class BucketOf>
std::set<size_t> bruteExtremes(const std::vector<P>& p, size_t buckets, BucketOf bucketOf) {
    std::vector<size_t> lo(buckets, p.size()), hi(buckets, p.size());
    for (size_t i = 0; i < p.size(); ++i) {
        if (!std::isfinite(p[i].y)) continue;
        const size_t b = bucketOf(i);
        if (lo[b] == p.size() || p[i].y < p[lo[b]].y) lo[b] = i;
        if (hi[b] == p.size() || p[i].y > p[hi[b]].y) hi[b] = i;
    }
    std::set<size_t> out;
    for (size_t b = 0; b < buckets; ++b) {
        if (lo[b] != p.size()) out.insert(lo[b]);
        if (hi[b] != p.size()) out.insert(hi[b]);
    }
    return out;
}

}  // namespace

TEST(MinMaxDownsample, EqualCountBucketsKeepEachGroupsExtremesAndNothingElse) {
    const auto p = noisy(10'007, 1);  // not a multiple of the bucket count
    const size_t buckets = 97;
    const auto kept = indices(p, {.buckets = buckets, .by = Bucketing::EqualCount});
    EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
    EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end());  // distinct
    // Bucket k holds [k·n/B, (k+1)·n/B), as the report's mean buckets do.
    const size_t n = p.size();
    const auto expected = bruteExtremes(p, buckets, [&](size_t i) {
        size_t k = 0;
        while ((k + 1) * n / buckets <= i) ++k;
        return k;
    });
    EXPECT_EQ(std::set<size_t>(kept.begin(), kept.end()), expected);
}

TEST(MinMaxDownsample, EqualWidthBucketsCutTheXRangeAndKeepBothEnds) {
    // Uneven x spacing: equal widths are not equal counts.
    std::vector<P> p = noisy(20'000, 2);
    for (auto& q : p) q.x = q.x * q.x / 1000.0;
    const double x0 = p.front().x, x1 = p.back().x;
    const size_t buckets = 150;
    const auto kept = indices(p, {.buckets = buckets, .by = Bucketing::EqualWidth, .xMin = x0, .xMax = x1, .keep_ends = true});
    EXPECT_LE(kept.size(), 2 * buckets + 2);
    auto expected = bruteExtremes(p, buckets, [&](size_t i) {
        return std::min(size_t((p[i].x - x0) / (x1 - x0) * double(buckets)), buckets - 1);
    });
    expected.insert(0);
    expected.insert(p.size() - 1);
    EXPECT_EQ(std::set<size_t>(kept.begin(), kept.end()), expected);
    // Reversed bounds cut the same buckets.
    EXPECT_EQ(indices(p, {.buckets = buckets, .by = Bucketing::EqualWidth, .xMin = x1, .xMax = x0, .keep_ends = true}), kept);
}

TEST(MinMaxDownsample, AShortRangeComesBackWholeWithOrWithoutItsGaps) {
    auto p = noisy(50, 3);
    p[7].y = std::numeric_limits<double>::quiet_NaN();
    const auto withGaps = indices(p, {.buckets = 25, .gaps = true});
    EXPECT_EQ(withGaps.size(), 50u);
    const auto drawable = indices(p, {.buckets = 25});
    EXPECT_EQ(drawable.size(), 49u);
    EXPECT_EQ(std::count(drawable.begin(), drawable.end(), size_t(7)), 0);
    // The threshold is per caller: two ends on top of two points per bucket.
    EXPECT_EQ(indices(noisy(52, 3), {.buckets = 25, .keep_ends = true}).size(), 52u);
    EXPECT_LT(indices(noisy(53, 3), {.buckets = 25, .keep_ends = true}).size(), 53u);
}

TEST(MinMaxDownsample, ABucketOfNaNsIsAGapOnlyWhenAskedFor) {
    auto p = noisy(1'000, 4);
    for (size_t i = 500; i < 600; ++i) p[i].y = std::numeric_limits<double>::quiet_NaN();  // diverged
    const auto gaps = indices(p, {.buckets = 10, .gaps = true});
    // Bucket 5 ([500, 600)) keeps one point, its first, whose NaN breaks the line.
    EXPECT_EQ(std::count_if(gaps.begin(), gaps.end(), [&](size_t i) { return std::isnan(p[i].y); }), 1);
    EXPECT_NE(std::find(gaps.begin(), gaps.end(), size_t(500)), gaps.end());
    const auto noGaps = indices(p, {.buckets = 10});
    EXPECT_EQ(std::count_if(noGaps.begin(), noGaps.end(), [&](size_t i) { return !std::isfinite(p[i].y); }), 0);
    EXPECT_EQ(noGaps.size(), 18u);  // nine buckets with finite points, two each
}

TEST(MinMaxDownsample, VisibleRangeIsInclusiveInEitherOrder) {
    const std::vector<P> p{{1, 0}, {2, 0}, {2, 1}, {3, 0}, {5, 0}};
    const IndexRange r = visibleRange(std::span<const P>(p), 2, 3, x);
    EXPECT_EQ(r.begin, 1u);
    EXPECT_EQ(r.end, 4u);
    EXPECT_EQ(visibleRange(std::span<const P>(p), 3, 2, x).size(), 3u);
    EXPECT_EQ(visibleRange(std::span<const P>(p), 6, 9, x).size(), 0u);
}
