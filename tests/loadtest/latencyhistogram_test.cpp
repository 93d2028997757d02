// The latency histogram against exact sorted percentiles on random data: every percentile within
// 0.1 % (three significant digits), at any magnitude, and merged histograms equal the whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "app/loadtest/latencyhistogram.h"
#include "engine/util/rng.h"

namespace trainbench::app::loadtest {
namespace {

int64_t exactPercentile(std::vector<int64_t> sorted, double p) {  // nearest rank
    const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size()))));
    return sorted[rank - 1];
}

// Log-uniform from 1 us to 10 s: every bucket scale a latency can have.
std::vector<int64_t> randomLatencies(size_t n, uint64_t seed) {
    engine::Rng rng(seed);
    std::vector<int64_t> v(n);
    for (auto& x : v) x = static_cast<int64_t>(std::exp(std::log(1e3) + rng.uniform() * (std::log(1e10) - std::log(1e3))));
    return v;
}

TEST(LatencyHistogram, PercentilesWithinATenthOfAPercentOfTheExactOnes) {
    for (uint64_t seed : {1u, 2u, 3u}) {
        std::vector<int64_t> values = randomLatencies(100'000, seed);
        LatencyHistogram h;
        for (int64_t v : values) h.record(v);
        std::sort(values.begin(), values.end());
        for (double p : {1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
            const double exact = static_cast<double>(exactPercentile(values, p));
            const double got = static_cast<double>(h.percentile(p));
            EXPECT_LE(std::abs(got - exact) / exact, 0.001) << "p" << p << " seed " << seed;
        }
        EXPECT_EQ(h.count(), 100'000);
        EXPECT_EQ(h.min(), values.front());
        EXPECT_EQ(h.max(), values.back());
    }
}

TEST(LatencyHistogram, SmallValuesAreExact) {
    LatencyHistogram h;
    for (int64_t v = 0; v < 2000; ++v) h.record(v);
    EXPECT_EQ(h.percentile(50), 999);
    EXPECT_EQ(h.percentile(100), 1999);
}

TEST(LatencyHistogram, MergedPerThreadHistogramsEqualOneOverAllValues) {
    const std::vector<int64_t> values = randomLatencies(50'000, 7);
    LatencyHistogram whole, a, b;
    for (size_t i = 0; i < values.size(); ++i) {
        whole.record(values[i]);
        (i % 3 ? a : b).record(values[i]);
    }
    a.merge(b);
    EXPECT_EQ(a.count(), whole.count());
    EXPECT_EQ(a.min(), whole.min());
    EXPECT_EQ(a.max(), whole.max());
    for (double p : {50.0, 90.0, 99.0, 99.9}) EXPECT_EQ(a.percentile(p), whole.percentile(p)) << p;
    EXPECT_NEAR(a.mean(), whole.mean(), whole.mean() * 1e-12);
}

TEST(LatencyHistogram, ValuesBeyondTheRangeCountAtTheTopAndKeepTheirMaximum) {
    LatencyHistogram h;
    h.record(-5);
    h.record(LatencyHistogram::kHighest * 4);
    EXPECT_EQ(h.min(), 0);
    EXPECT_EQ(h.max(), LatencyHistogram::kHighest * 4);
    EXPECT_EQ(h.percentile(0), 0);
    EXPECT_LE(h.percentile(100), h.max());
}

}  // namespace
}  // namespace trainbench::app::loadtest
