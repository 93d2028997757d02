#pragma once
// When the Server scenario's queries arrive: a Poisson process at the target rate, drawn from a
// seeded generator (the same seed gives the same schedule on every machine), as MLPerf LoadGen's
// Server scenario does.
#include <cstdint>
#include <vector>

namespace trainbench::app::loadtest {

// `count` arrival times in nanoseconds from the start, non-decreasing. The gaps are exponential
// with mean 1/qps; they are drawn count + 1 at a time and scaled so that the (count + 1)-th arrival
// falls exactly at count / qps seconds. That is a Poisson process conditioned on its count (the
// arrivals are then ordered uniform points of the window), so the schedule's own rate is exactly
// the target: a run that keeps up achieves the target QPS, not the target ± the draw's 1/sqrt(count)
// noise. qps > 0, count >= 0.
std::vector<int64_t> poissonArrivals(double qps, int64_t count, uint64_t seed);

// The length of the window poissonArrivals spreads `count` arrivals over (count / qps), in ns.
int64_t scheduleWindowNs(double qps, int64_t count);

}  // namespace trainbench::app::loadtest
