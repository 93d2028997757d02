#pragma once
// Elapsed time on the steady clock, as the engine's phases and servers record it.
#include <chrono>
#include <cstdint>

namespace trainbench::engine {

// Seconds from t to now.
inline double secondsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A duration in whole microseconds.
inline int64_t micros(std::chrono::steady_clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

}  // namespace trainbench::engine
