#pragma once
// The pieces of JSON text the trace writer streams out, without building a document: strings
// (escaped, always valid UTF-8), exact fixed-point microseconds, shortest round-trip doubles.
#include <cstdint>
#include <string>
#include <string_view>

namespace trainbench::profiler::jsonout {

// `"..."` with ", \ and control characters escaped (\n, \t, ... or \u00XX). Bytes that are not
// valid UTF-8 become U+FFFD, so that any JSON parser (nlohmann's rejects bad UTF-8) reads it back.
void appendString(std::string& out, std::string_view text);

// Nanoseconds as microseconds with three decimals, exactly ("1234.567", "-0.001"): no rounding
// through a double, so a zone nested in another stays nested in the text.
void appendMicros(std::string& out, int64_t nanoseconds);

void appendInt(std::string& out, int64_t value);

// The shortest text that reads back as the same double ("3", "0.1", "1e+300"); null for NaN and
// infinities, which JSON cannot hold (callers leave such values out rather than write null).
void appendDouble(std::string& out, double value);

}  // namespace trainbench::profiler::jsonout
