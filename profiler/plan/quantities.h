#pragma once
// The planner's limits as people write them: durations "90s", "45m", "2h", "1h30m", "1.5h", "2d", "500ms"
// and amounts of money "5", "$5", "5.50", "USD 5". Errors say what was expected and where.
// (Written back as text by profiler/format/numberformat.h.)
#include <string>

namespace trainbench::profiler {

// Seconds. Units ms, s, m (minutes), h, d, one or more of them, largest first; a bare number is seconds.
// Throws std::invalid_argument ("deadline '2x': unknown unit 'x' at character 2; ...").
double parseDuration(const std::string& text, const std::string& what = "duration");

// US dollars, >= 0. Throws std::invalid_argument.
double parseMoney(const std::string& text, const std::string& what = "amount");

}  // namespace trainbench::profiler
