#pragma once
// A duration as people read it in a message: "2 s", "0.25 s", "1.234 s".
#include <chrono>
#include <cstdio>
#include <string>

namespace trainbench::engine {

inline std::string secondsText(std::chrono::milliseconds t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(t.count()) / 1000.0);
    return buf;
}

}  // namespace trainbench::engine
