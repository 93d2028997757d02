#pragma once
// How the devices of an emulated group are wired, as the collectives' cost model sees it: a ring, a
// switch, or a 1-3 dimensional torus of chips (with or without wrap-around per dimension), each
// link an α-β link, optionally with several cores per chip joined by on-chip links. The link figures
// come from the device catalog; nothing here knows a piece of hardware.
#include <optional>
#include <string>
#include <vector>

namespace trainbench::engine {

// One direction of one link: a message of m bytes occupies it for alpha_s + m * beta_s_per_byte.
struct LinkParams {
    double alpha_s = 0.0;          // latency per message, seconds
    double beta_s_per_byte = 0.0;  // inverse bandwidth of one direction, seconds per byte

    // From a latency and a one-direction bandwidth in bytes per second.
    static LinkParams fromBandwidth(double alpha_s, double bytes_per_s) { return {alpha_s, 1.0 / bytes_per_s}; }
};

enum class TopologyKind {
    Ring,               // p nodes, one link from each node to the next: the unidirectional ring algorithm
    BidirectionalRing,  // p nodes, a link each way between neighbours: half the data goes each way
    Switch,             // p nodes, each with one full-duplex port on a non-blocking switch
    Torus,              // a 1-3 dimensional grid; each dimension a ring (wrap-around) or a line
};

// Cores that share a chip and reduce among themselves before the chip talks to the torus
// (a TPU chip's two TensorCores). The on-chip links have their own α and β.
struct OnChipLevel {
    int cores_per_chip = 1;
    LinkParams link;
};

struct Topology {
    TopologyKind kind = TopologyKind::Ring;
    // Ring, BidirectionalRing, Switch: {p}. Torus: the extent of each dimension, X first; the
    // dimension-ordered algorithm visits them in this order.
    std::vector<int> dims{1};
    // Torus only, one flag per dimension: whether the dimension's end chips are linked to each other.
    std::vector<bool> wrap;
    LinkParams link;
    std::optional<OnChipLevel> on_chip;

    // Chips (the nodes of the ring, switch or torus).
    int chips() const;
    // Endpoints of a collective: chips times cores per chip.
    int nodes() const;
    // e.g. "torus 4x4x8 (wrap x,y,z) + 2 cores/chip", for messages and reports.
    std::string describe() const;
};

Topology ringTopology(int nodes, LinkParams link);
Topology bidirectionalRingTopology(int nodes, LinkParams link);
Topology switchTopology(int nodes, LinkParams link);
// dims and wrap of equal length, 1 to 3 dimensions, every extent >= 1.
Topology torusTopology(std::vector<int> dims, std::vector<bool> wrap, LinkParams link);
// The same topology with `cores_per_chip` cores on each chip, joined by `link`.
Topology withOnChip(Topology chips, int cores_per_chip, LinkParams link);

// Throws std::invalid_argument naming the field that is wrong (node counts, dimensions, wrap
// flags, negative or non-finite link figures).
void validateTopology(const Topology& topology);

}  // namespace trainbench::engine
