#pragma once
// MLPerf's way of summarising runs of one configuration that differ only by seed: with five runs
// or more the fastest and the slowest are dropped and the rest averaged; with fewer, all are
// averaged. A run that never reached the target counts as infinitely slow: dropped if it is the one
// slowest of five or more, otherwise the mean is "not reached".
#include <cstddef>
#include <optional>
#include <vector>

namespace trainbench::profiler {

// One run's time to target and its cost; seconds nullopt: not reached (infinite). cost nullopt with
// seconds set: no price known.
struct RunOutcome {
    std::optional<double> seconds;
    std::optional<double> cost;
};

struct GroupStatistic {
    int runs = 0;
    int reached = 0;
    int dropped = 0;                // 2 with five runs or more, else 0
    std::optional<double> seconds;  // mean over the kept runs; nullopt when a kept run did not reach
    std::optional<double> cost;     // mean cost of the same runs; nullopt also when one has no price
    // Spread: over every run that reached (kept or dropped), and the sample standard deviation of
    // the kept runs' seconds (nullopt with fewer than two kept, or when seconds is nullopt).
    std::optional<double> min_seconds, max_seconds, stddev_seconds;
};

inline constexpr int kMlperfMinRunsToDrop = 5;

GroupStatistic groupStatistic(const std::vector<RunOutcome>& runs);

}  // namespace trainbench::profiler
