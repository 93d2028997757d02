#pragma once
// How the report writes numbers and names, the same in every table and chart.
#include <optional>
#include <string>

#include "profiler/store/runrow.h"

namespace trainbench::profiler {

inline constexpr const char* kNotRecorded = "not recorded";

std::string runLabel(const RunRow& run);                  // "#3 fmnist-mlp"
std::string fmtFixed(double v, int decimals);              // "0.357"
std::string fmtPercent(double fraction, int decimals = 2); // 0.8577 -> "85.77 %"
std::string fmtSeconds(double seconds);                    // "2.41 s", "75.3 s (1:15)"
std::string fmtMs(double seconds);                         // "3.214 ms"
std::string fmtRate(double perSecond);                     // "42531"
std::string fmtBytes(double bytes);                        // "1.5 MiB"
std::string fmtTime(const std::string& iso);               // "2024-05-01 12:34:56 UTC"

}  // namespace trainbench::profiler
