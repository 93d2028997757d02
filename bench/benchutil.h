#pragma once
// Small helpers shared by the trainbench-bench subcommands.
#include <algorithm>
#include <chrono>
#include <vector>

namespace trainbench::bench {

using Clock = std::chrono::steady_clock;

// The median of a set of timings (0 for none).
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

inline double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace trainbench::bench
