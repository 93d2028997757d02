#pragma once
// The wires of a Topology laid out as nodes and directed links of a MessageSchedule, for the
// simulator (collectivesimulator.cpp) to route its messages over.
//  * Ring: a link from each chip to the next (the last to the first).
//  * BidirectionalRing: that, and a link from each chip to the previous one.
//  * Switch: one more node, the switch; each chip has an up link (carrying α and β) and a down
//    link (β only: the switch's latency is charged once, on the way up).
//  * Torus: along each dimension, with wrap-around every chip links to both neighbours (modulo the
//    extent: a ring of p has p links each way); without, a line: no link past either end.
//  * Cores of a chip (on-chip level): a ring, core k to core k+1; core 0 is the chip's router, the
//    node the chip-level links start and end at.
#include <vector>

#include "engine/emulation/messageschedule.h"
#include "engine/emulation/topology.h"

namespace trainbench::engine {

class CollectiveNetwork {
public:
    CollectiveNetwork(const Topology& topology, MessageSchedule& schedule);

    int chips() const { return chips_; }
    int cores() const { return cores_; }
    int node(int chip, int core) const { return chip * cores_ + core; }
    int router(int chip) const { return node(chip, 0); }

    // Chip-level dimensions (for a ring or a switch: one, of extent p).
    int dimensions() const { return static_cast<int>(extent_.size()); }
    int extent(int dim) const { return extent_[static_cast<size_t>(dim)]; }
    int stride(int dim) const { return stride_[static_cast<size_t>(dim)]; }
    int coordinate(int chip, int dim) const { return chip / stride(dim) % extent(dim); }

    // Link from `chip` to its next / previous neighbour along `dim`, or -1 where there is none.
    int next(int chip, int dim) const { return next_[index(chip, dim)]; }
    int previous(int chip, int dim) const { return previous_[index(chip, dim)]; }
    // Switch only: the chip's up and down links.
    int up(int chip) const { return up_[static_cast<size_t>(chip)]; }
    int down(int chip) const { return down_[static_cast<size_t>(chip)]; }
    // On-chip level: link from core `core` of `chip` to the next core.
    int nextCore(int chip, int core) const { return nextCore_[static_cast<size_t>(node(chip, core))]; }

private:
    size_t index(int chip, int dim) const { return static_cast<size_t>(chip) * extent_.size() + static_cast<size_t>(dim); }

    int chips_ = 1;
    int cores_ = 1;
    std::vector<int> extent_, stride_;
    std::vector<int> next_, previous_, up_, down_, nextCore_;
};

}  // namespace trainbench::engine
