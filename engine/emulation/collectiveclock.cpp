#include "engine/emulation/collectiveclock.h"

#include <utility>

#include "engine/emulation/collectivemodel.h"

namespace trainbench::engine {

CollectiveClock::CollectiveClock(Topology topology) : topology_(std::move(topology)) { validateTopology(topology_); }

double CollectiveClock::allReduceSeconds(uint64_t bytes) {
    std::lock_guard lock(mutex_);
    if (auto it = seconds_.find(bytes); it != seconds_.end()) return it->second;
    const double s = engine::allReduceSeconds(topology_, static_cast<double>(bytes));
    seconds_.emplace(bytes, s);
    return s;
}

size_t CollectiveClock::cachedSizes() const {
    std::lock_guard lock(mutex_);
    return seconds_.size();
}

}  // namespace trainbench::engine
