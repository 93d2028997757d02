#pragma once
// The planner's limits as people write them: durations "90s", "45m", "2h", "1h30m", "1.5h", "2d", "500ms"
// and amounts of money "5", "$5", "5.50", "USD 5". Errors say what was expected and where.
#include <string>

namespace trainbench::profiler {

// Seconds. Units ms, s, m (minutes), h, d, one or more of them, largest first; a bare number is seconds.
// Throws std::invalid_argument ("deadline '2x': unknown unit 'x' at character 2; ...").
double parseDuration(const std::string& text, const std::string& what = "duration");

// US dollars, >= 0. Throws std::invalid_argument.
double parseMoney(const std::string& text, const std::string& what = "amount");

// 95 s, 12.5 min, 3.2 h, 2.1 days: for tables.
std::string formatDuration(double seconds);
// $0.0042, $1.25, $1,234: enough digits to tell small costs apart.
std::string formatMoney(double usd);
// The shortest text that reads back as `v`: 0.5 and 1000, not 0.500000 and 1000.000000.
std::string shortestNumber(double v);

}  // namespace trainbench::profiler
