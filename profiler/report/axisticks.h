#pragma once
// Axis ends and tick marks at round numbers (1, 2, 2.5, 5 × 10^k), and tick labels short enough to
// sit under an axis ("0.25", "40k", "85 %").
#include <string>
#include <vector>

#include "profiler/report/chart.h"

namespace trainbench::profiler {

struct AxisTicks {
    double lo = 0.0;            // the axis' ends: the data's range widened to whole ticks
    double hi = 1.0;
    std::vector<double> ticks;  // from lo to hi
    double step = 0.2;
};

// About `target` ticks covering [lo, hi]. An empty range (lo == hi) is widened around its value.
// With `integer`, the step is a whole number (at least 1).
AxisTicks niceTicks(double lo, double hi, int target = 5, bool integer = false);

// A tick label; `step` decides the decimals.
std::string tickLabel(double value, double step, AxisFormat format);

// A log2 axis over [lo, hi] (both already log2 of the values): ends and ticks at whole exponents,
// every `step` octaves so that there are at most about 8 ticks.
AxisTicks log2Ticks(double lo, double hi);
// The label of a log2 tick at exponent e: the count 2^e in full ("2048", "65536"), "1.05M" beyond.
std::string log2TickLabel(double exponent);

}  // namespace trainbench::profiler
