#pragma once
// The virtual clock's price of a gradient all-reduce on one topology, remembered by byte size: a
// synchronous strategy asks for every bucket of every step, and buckets repeat. The closed form
// behind it (collectivemodel.h) costs microseconds even on a 4096-core slice, so a first call is
// cheap too. Thread-safe: the replicas of one strategy may share a clock.
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "engine/emulation/topology.h"

namespace trainbench::engine {

class CollectiveClock {
public:
    // Throws std::invalid_argument for an invalid topology (validateTopology).
    explicit CollectiveClock(Topology topology);

    const Topology& topology() const { return topology_; }
    // Seconds the all-reduce of `bytes` takes on the topology.
    double allReduceSeconds(uint64_t bytes);
    // Distinct sizes priced so far.
    size_t cachedSizes() const;

private:
    Topology topology_;
    mutable std::mutex mutex_;
    std::unordered_map<uint64_t, double> seconds_;
};

}  // namespace trainbench::engine
