#include "profiler/report/axisticks.h"

#include <cmath>
#include <algorithm>
#include <cstdio>

namespace trainbench::profiler {

namespace {

// The round number nearest above `raw`: 1, 2, 2.5 or 5 times a power of ten.
double niceStep(double raw) {
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / magnitude;
    if (f <= 1.0) return magnitude;
    if (f <= 2.0) return 2 * magnitude;
    if (f <= 2.5) return 2.5 * magnitude;
    if (f <= 5.0) return 5 * magnitude;
    return 10 * magnitude;
}

int decimalsFor(double step) {
    // Enough to tell neighbouring ticks apart (2.5 × 10^k needs one more digit than 10^k).
    int d = 0;
    double s = step;
    while (d < 6 && std::fabs(s - std::round(s)) > 1e-9 * std::max(1.0, std::fabs(s))) {
        s *= 10;
        ++d;
    }
    return d;
}

}  // namespace

AxisTicks niceTicks(double lo, double hi, int target, bool integer) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    if (hi < lo) std::swap(lo, hi);
    if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) {
        const double pad = lo == 0 ? 1.0 : std::fabs(lo) * 0.1;
        lo -= pad;
        hi += pad;
    }
    AxisTicks t;
    t.step = niceStep((hi - lo) / std::max(1, target));
    if (integer) t.step = std::max(1.0, std::round(t.step));
    t.lo = std::floor(lo / t.step + 1e-9) * t.step;
    t.hi = std::ceil(hi / t.step - 1e-9) * t.step;
    const int n = static_cast<int>(std::lround((t.hi - t.lo) / t.step));
    for (int i = 0; i <= n; ++i) {
        double v = t.lo + i * t.step;
        if (std::fabs(v) < t.step * 1e-9) v = 0.0;  // no "-0"
        t.ticks.push_back(v);
    }
    return t;
}

std::string tickLabel(double value, double step, AxisFormat format) {
    char buf[48];
    if (format == AxisFormat::Percent) {
        std::snprintf(buf, sizeof buf, "%.*f %%", decimalsFor(step * 100), value * 100);
        return buf;
    }
    const double a = std::max(std::fabs(value), step);
    if (a >= 1e6 && step >= 1e4) {
        std::snprintf(buf, sizeof buf, "%.*fM", decimalsFor(step / 1e6), value / 1e6);
    } else if (a >= 1e4 && step >= 100) {
        std::snprintf(buf, sizeof buf, "%.*fk", decimalsFor(step / 1e3), value / 1e3);
    } else {
        std::snprintf(buf, sizeof buf, "%.*f", decimalsFor(step), value);
    }
    return buf;
}

AxisTicks log2Ticks(double lo, double hi) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    if (hi < lo) std::swap(lo, hi);
    AxisTicks t;
    t.lo = std::floor(lo + 1e-9);
    t.hi = std::max(std::ceil(hi - 1e-9), t.lo + 1);
    t.step = std::max(1.0, std::ceil((t.hi - t.lo) / 8));
    t.hi = t.lo + std::ceil((t.hi - t.lo) / t.step) * t.step;
    for (double e = t.lo; e <= t.hi + 1e-9; e += t.step) t.ticks.push_back(e);
    return t;
}

std::string log2TickLabel(double exponent) {
    const double v = std::exp2(exponent);
    char buf[32];
    if (v >= 1e7) std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
    else if (v >= 1) std::snprintf(buf, sizeof buf, "%.0f", v);
    else std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

}  // namespace trainbench::profiler
