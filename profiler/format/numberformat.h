#pragma once
// Numbers as text: the one formatter of the CLI, the run messages, the run attributes and the report
// (Qt-free; the GUI's QString labels are ui/models/format.h). Each function is one style; pick the
// style of the place you write to, so that the same number reads the same everywhere.
#include <string>

namespace trainbench::profiler {

// The shortest text that reads back as `v`: 0.5 and 1000, not 0.500000 and 1000.000000. Run
// attributes, schema bounds and defaults, sweep point names.
std::string shortestNumber(double v);
// 95 s, 12.5 min, 3.2 h, 2.1 days: for tables (plan, estimate).
std::string formatDuration(double seconds);
// $0.0042, $1.25, $1,234: enough digits to tell small costs apart.
std::string formatMoney(double usd);
// Seconds as milliseconds to three significant digits: "1.16 ms", "0.00571 ms" (run messages).
std::string millis(double seconds);
// Seconds as a clock: "1:15", "1:02:03"; "?" if negative or not finite (the CLI's progress and run summary).
std::string clockTime(double seconds);

// The report's styles, the same in every table and chart.
std::string fmtFixed(double v, int decimals);              // "0.357"; NaN as "NaN"
std::string fmtPercent(double fraction, int decimals = 2); // 0.8577 -> "85.77 %"
std::string fmtSeconds(double seconds);                    // "2.41 s", "75.3 s (1:15)"
std::string fmtMs(double seconds);                         // "3.214 ms"
std::string fmtRate(double perSecond);                     // "42531"
std::string fmtBytes(double bytes);                        // "1.5 MiB"

}  // namespace trainbench::profiler
