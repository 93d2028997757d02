#pragma once
// How the GUI writes numbers from the store: one place, so a table, a card and a tooltip agree.
// Absent values (std::nullopt) become an empty string: the GUI never shows what was not recorded.
#include <QDateTime>
#include <QString>

#include <cstdint>
#include <optional>

namespace trainbench::ui::format {

QString percent(std::optional<double> fraction, int decimals = 1);      // 0.873 -> "87.3 %"
QString duration(std::optional<double> seconds);                        // "850 ms", "12.4 s", "3 m 05 s", "2 h 01 m"
QString throughput(std::optional<double> samplesPerSecond);             // "12,345 samples/s"
QString bytes(std::optional<double> bytes);                             // "1.5 MiB"
QString integer(std::optional<int64_t> value);                          // "12,800"
QString number(std::optional<double> value, int significant = 3);       // "0.0123", "1.23e+06"
// ISO-8601 UTC from the store -> local time "2026-11-21 14:03"; the input unchanged if unparsable.
QString localTime(const std::string& iso);
QDateTime parseTime(const std::string& iso);

}  // namespace trainbench::ui::format
