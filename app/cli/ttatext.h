#pragma once
// How `tta` and `plan` print times, costs and accuracies, in tables and JSON: an unknown cost is
// "unknown" (null in JSON), never 0.
#include <cstdio>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/format/numberformat.h"

namespace trainbench::cli {

inline std::string percentText(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f %%", 100.0 * fraction);
    return buf;
}

inline std::string timeText(const std::optional<double>& seconds) {
    return seconds ? profiler::formatDuration(*seconds) : "-";
}

// A cost next to a known time: the amount, or "unknown" when no price was recorded.
inline std::string costText(const std::optional<double>& seconds, const std::optional<double>& cost) {
    if (!seconds) return "-";
    return cost ? profiler::formatMoney(*cost) : "unknown";
}

template <class T>
nlohmann::json jsonOr(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace trainbench::cli
