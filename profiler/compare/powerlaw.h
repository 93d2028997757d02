#pragma once
// A power law y = coefficient x examples^slope fitted by least squares on log-log axes, the figure
// read from a data-scaling sweep: how fast the error falls as the training set grows (a slope of
// -0.3 means twice the data leaves 2^-0.3 = 81 % of the error).
#include <optional>
#include <vector>

namespace trainbench::profiler {

struct PowerLawFit {
    double slope = 0.0;        // d ln y / d ln x
    double coefficient = 0.0;  // y at x = 1
    double r2 = 0.0;           // of the straight line on log-log axes (1: every point on it)
    int points = 0;            // points fitted
    double at(double x) const;
    // y falls (or rises) by this factor each time x doubles: 2^slope.
    double perDoubling() const;
};

struct FitPoint {
    double x = 0.0;
    double y = 0.0;
};

// nullopt unless the points have at least `minDistinctX` different x, all x > 0 and y > 0 (a zero
// error has no logarithm: such points are left out first).
std::optional<PowerLawFit> fitPowerLaw(const std::vector<FitPoint>& points, int minDistinctX = 3);

}  // namespace trainbench::profiler
