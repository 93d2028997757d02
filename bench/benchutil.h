#pragma once
// Small helpers shared by the trainbench-bench subcommands.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace trainbench::bench {

using Clock = std::chrono::steady_clock;

// The median of a set of timings (0 for none).
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// The p-th quantile (p in [0, 1]) of a set of timings, nearest rank: the smallest value with at least
// p of the set at or below it (0 for none).
inline double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

inline double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace trainbench::bench
