#include "app/loadtest/arrivals.h"

#include <cmath>

#include "engine/util/rng.h"

namespace trainbench::app::loadtest {

int64_t scheduleWindowNs(double qps, int64_t count) {
    return static_cast<int64_t>(std::llround(static_cast<double>(count) / qps * 1e9));
}

std::vector<int64_t> poissonArrivals(double qps, int64_t count, uint64_t seed) {
    engine::Rng rng(seed);
    std::vector<double> cumulative(static_cast<size_t>(count) + 1);
    double sum = 0.0;
    for (double& c : cumulative) {
        // 53 random bits: u in [0, 1), so 1 - u is never 0 and the gap is finite.
        const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
        sum += -std::log1p(-u);  // Exp(1)
        c = sum;
    }
    const double window = static_cast<double>(scheduleWindowNs(qps, count));
    std::vector<int64_t> arrivals(static_cast<size_t>(count));
    for (size_t i = 0; i < arrivals.size(); ++i)
        arrivals[i] = static_cast<int64_t>(std::llround(cumulative[i] / sum * window));
    return arrivals;
}

}  // namespace trainbench::app::loadtest
