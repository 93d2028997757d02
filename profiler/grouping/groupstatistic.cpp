#include "profiler/grouping/groupstatistic.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainbench::profiler {

GroupStatistic groupStatistic(const std::vector<RunOutcome>& runs) {
    GroupStatistic g;
    g.runs = static_cast<int>(runs.size());
    if (runs.empty()) return g;
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<RunOutcome> sorted = runs;
    // Fastest first, the runs that never reached last; stable, so ties keep their order.
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](const RunOutcome& a, const RunOutcome& b) { return a.seconds.value_or(inf) < b.seconds.value_or(inf); });
    for (const RunOutcome& r : sorted) {
        if (!r.seconds) continue;
        ++g.reached;
        g.min_seconds = std::min(g.min_seconds.value_or(*r.seconds), *r.seconds);
        g.max_seconds = std::max(g.max_seconds.value_or(*r.seconds), *r.seconds);
    }
    auto first = sorted.begin(), last = sorted.end();
    if (g.runs >= kMlperfMinRunsToDrop) {
        g.dropped = 2;
        ++first;
        --last;
    }
    double seconds = 0.0, cost = 0.0;
    bool priced = true;
    for (auto it = first; it != last; ++it) {
        if (!it->seconds) return g;  // a kept run never got there: neither does the group's mean
        seconds += *it->seconds;
        if (it->cost) cost += *it->cost;
        else priced = false;
    }
    const double kept = static_cast<double>(last - first);
    g.seconds = seconds / kept;
    if (priced) g.cost = cost / kept;
    if (kept >= 2) {
        double ss = 0.0;
        for (auto it = first; it != last; ++it) ss += (*it->seconds - *g.seconds) * (*it->seconds - *g.seconds);
        g.stddev_seconds = std::sqrt(ss / (kept - 1));
    }
    return g;
}

}  // namespace trainbench::profiler
