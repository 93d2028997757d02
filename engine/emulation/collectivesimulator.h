#pragma once
// Collectives played out message by message on a Topology's links (MessageSchedule's event loop):
// the actual schedules of the ring, bidirectional-ring, switch and dimension-ordered torus
// algorithms, with per-node dependencies and per-link queues. It is the reference the closed forms
// of collectivemodel.h are checked against, and a way to see where a schedule spends its time.
// Too slow for a per-step clock on big slices (tens of milliseconds); the closed form is for that.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/emulation/topology.h"

namespace trainbench::engine {

struct SimulatedPhase {
    std::string name;     // as in collectivemodel.h's PhaseTime
    double seconds = 0.0; // how much later this phase's last message arrived than the previous phase's
    int64_t messages = 0;
};

struct SimulatedCollective {
    double seconds = 0.0;  // when the last message arrived
    int64_t messages = 0;  // link messages sent (a message over several links counts once)
    std::vector<SimulatedPhase> phases;
};

// Same arguments and algorithms as allReduceTime and friends in collectivemodel.h.
SimulatedCollective simulateAllReduce(const Topology& topology, double bytes);
SimulatedCollective simulateReduceScatter(const Topology& topology, double bytes);
SimulatedCollective simulateAllGather(const Topology& topology, double bytes);
SimulatedCollective simulateBroadcast(const Topology& topology, double bytes, int segments);
// One message over a line of `hops` links.
SimulatedCollective simulatePointToPoint(const LinkParams& link, double bytes, int hops = 1);

}  // namespace trainbench::engine
