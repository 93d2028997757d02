#include "profiler/compare/powerlaw.h"

#include <cmath>
#include <set>

namespace trainbench::profiler {

double PowerLawFit::at(double x) const { return coefficient * std::pow(x, slope); }

double PowerLawFit::perDoubling() const { return std::pow(2.0, slope); }

std::optional<PowerLawFit> fitPowerLaw(const std::vector<FitPoint>& points, int minDistinctX) {
    std::vector<FitPoint> logs;
    std::set<double> xs;
    for (const FitPoint& p : points) {
        if (!(p.x > 0 && p.y > 0) || !std::isfinite(p.x) || !std::isfinite(p.y)) continue;
        logs.push_back({std::log(p.x), std::log(p.y)});
        xs.insert(p.x);
    }
    if (static_cast<int>(xs.size()) < std::max(2, minDistinctX)) return std::nullopt;
    const double n = static_cast<double>(logs.size());
    double mx = 0, my = 0;
    for (const FitPoint& p : logs) {
        mx += p.x / n;
        my += p.y / n;
    }
    double sxx = 0, sxy = 0, syy = 0;
    for (const FitPoint& p : logs) {
        sxx += (p.x - mx) * (p.x - mx);
        sxy += (p.x - mx) * (p.y - my);
        syy += (p.y - my) * (p.y - my);
    }
    PowerLawFit f;
    f.slope = sxy / sxx;
    f.coefficient = std::exp(my - f.slope * mx);
    double residual = 0;
    for (const FitPoint& p : logs) {
        const double e = p.y - (my + f.slope * (p.x - mx));
        residual += e * e;
    }
    f.r2 = syy > 0 ? 1.0 - residual / syy : 1.0;
    f.points = static_cast<int>(logs.size());
    return f;
}

}  // namespace trainbench::profiler
