#pragma once
// Closed-form α-β times of collectives on a Topology: what the virtual clock charges for a gradient
// all-reduce, a reduce-scatter, an all-gather, a broadcast or a parameter-server push. Every
// formula is derived in docs/collectives-model.md and checked against the message-level simulator
// (collectivesimulator.h), which shares none of this arithmetic.
#include <string>
#include <vector>

#include "engine/emulation/topology.h"

namespace trainbench::engine {

// One phase of a collective (e.g. "reduce-scatter x"), split into the part that scales with the
// number of messages (latency, α) and the part that scales with bytes (bandwidth, β).
struct PhaseTime {
    std::string name;
    double latency_s = 0.0;
    double bandwidth_s = 0.0;
    double seconds() const { return latency_s + bandwidth_s; }
};

// Phases run one after another; their times add up.
struct CollectiveTime {
    std::vector<PhaseTime> phases;
    double latency_s() const;
    double bandwidth_s() const;
    double seconds() const;
};

// Sum of `bytes` (each node's whole buffer) over all nodes, left on every node.
//   Ring: 2(p-1)α + 2(p-1)/p·n·β.  BidirectionalRing: 2(p-1)α + (p-1)/p·n·β.
//   Switch: recursive halving + doubling for p a power of two, else the ring.
//   Torus: dimension-ordered (reduce-scatter x, y, z; all-gather z, y, x), a wrapped dimension a
//   bidirectional ring, an unwrapped one a ring embedded in a line.
//   On-chip level: the cores of a chip reduce-scatter first and all-gather last.
CollectiveTime allReduceTime(const Topology& topology, double bytes);
double allReduceSeconds(const Topology& topology, double bytes);

// `bytes` is each node's whole input; each node ends with the sum of its 1/p share. No on-chip level.
CollectiveTime reduceScatterTime(const Topology& topology, double bytes);
// `bytes` is the whole gathered output; each node starts with its 1/p share. No on-chip level.
CollectiveTime allGatherTime(const Topology& topology, double bytes);

// `bytes` from node 0 to every other node, pipelined along the ring in `segments` pieces (a
// BidirectionalRing sends half each way). Ring kinds only.
CollectiveTime broadcastTime(const Topology& topology, double bytes, int segments);
// The segment count that minimises broadcastTime (at most kMaxBroadcastSegments).
int broadcastSegments(const Topology& topology, double bytes);
inline constexpr int kMaxBroadcastSegments = 1024;

// One message of `bytes` over `hops` links in a row, cut-through: hops·α + n·β. A parameter
// server's push or pull.
double pointToPointSeconds(const LinkParams& link, double bytes, int hops = 1);

}  // namespace trainbench::engine
