// The Server scenario's Poisson arrivals: the schedule's rate is the target, the gaps are
// exponential (Kolmogorov-Smirnov against Exp(qps)), and a seed fixes the schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "app/loadtest/arrivals.h"

namespace trainbench::app::loadtest {
namespace {

TEST(PoissonArrivals, TheScheduleRunsAtTheTargetRate) {
    const double qps = 250.0;
    const int64_t n = 20'000;
    const auto arrivals = poissonArrivals(qps, n, 42);
    ASSERT_EQ(static_cast<int64_t>(arrivals.size()), n);
    EXPECT_TRUE(std::is_sorted(arrivals.begin(), arrivals.end()));
    EXPECT_EQ(scheduleWindowNs(qps, n), 80'000'000'000);
    // The last arrival is one (exponential) gap before the window's end.
    const double rate = static_cast<double>(n) / (static_cast<double>(arrivals.back()) * 1e-9);
    EXPECT_NEAR(rate, qps, qps * 0.01);
}

TEST(PoissonArrivals, GapsAreExponentialWithMeanOneOverTheRate) {
    const double qps = 1000.0;
    const int64_t n = 20'000;
    const auto arrivals = poissonArrivals(qps, n, 7);
    std::vector<double> gaps;
    int64_t previous = 0;
    for (int64_t a : arrivals) {
        gaps.push_back(static_cast<double>(a - previous) * 1e-9);
        previous = a;
    }
    double mean = 0, var = 0;
    for (double g : gaps) mean += g;
    mean /= static_cast<double>(gaps.size());
    for (double g : gaps) var += (g - mean) * (g - mean);
    var /= static_cast<double>(gaps.size() - 1);
    EXPECT_NEAR(mean, 1.0 / qps, 0.02 / qps);
    EXPECT_NEAR(std::sqrt(var) / mean, 1.0, 0.03);  // an exponential's coefficient of variation is 1
    std::sort(gaps.begin(), gaps.end());
    double d = 0;  // Kolmogorov-Smirnov statistic against Exp(qps)
    for (size_t i = 0; i < gaps.size(); ++i) {
        const double cdf = 1.0 - std::exp(-qps * gaps[i]);
        const double size = static_cast<double>(gaps.size());
        d = std::max({d, std::abs(cdf - static_cast<double>(i) / size), std::abs(static_cast<double>(i + 1) / size - cdf)});
    }
    EXPECT_LT(d, 1.63 / std::sqrt(static_cast<double>(gaps.size())));  // the 1 % critical value
}

TEST(PoissonArrivals, TheSeedFixesTheSchedule) {
    EXPECT_EQ(poissonArrivals(100, 500, 3), poissonArrivals(100, 500, 3));
    EXPECT_NE(poissonArrivals(100, 500, 3), poissonArrivals(100, 500, 4));
}

}  // namespace
}  // namespace trainbench::app::loadtest
