#pragma once
// One CSV field as RFC 4180 writes it: a field with a comma, quote or line break is quoted, quotes
// doubled; anything else as it is. The report's chart CSVs and the prediction files use it.
#include <string>
#include <string_view>

namespace trainbench::profiler {

std::string csvField(std::string_view s);

}  // namespace trainbench::profiler
