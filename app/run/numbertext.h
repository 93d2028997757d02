#pragma once
// Times as run messages show them (numbers: profiler::shortestNumber).
#include <cstdio>
#include <string>

namespace trainbench::app {

// Seconds as milliseconds to three significant digits: "1.16 ms", "0.00571 ms".
inline std::string millis(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
    return buf;
}

}  // namespace trainbench::app
