#pragma once
// Numbers as run messages and run_attributes show them.
#include <charconv>
#include <cstdio>
#include <string>

namespace trainbench::app {

// 1000 and 0.5, not 1000.000000 and 0.500000 (and every digit a double needs).
inline std::string shortNumber(double v) {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    return std::string(buf, end);
}

// Seconds as milliseconds to three significant digits: "1.16 ms", "0.00571 ms".
inline std::string millis(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
    return buf;
}

}  // namespace trainbench::app
