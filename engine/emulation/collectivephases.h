#pragma once
// Names of the phases of a collective, shared by the closed-form model and the simulator so that a
// report (and a test) can set their phases side by side. Only names live here: the two compute
// their times independently.
#include <string>

#include "engine/emulation/topology.h"

namespace trainbench::engine::phases {

inline bool isPowerOfTwo(int p) { return p > 0 && (p & (p - 1)) == 0; }

// A switch runs recursive halving / doubling when p is a power of two, the ring otherwise.
inline bool switchUsesHalving(int p) { return isPowerOfTwo(p); }

// "reduce-scatter x" on a torus, "reduce-scatter (recursive halving)" on a switch, plain
// "reduce-scatter" on a ring; "all-gather ..." likewise.
inline std::string pass(bool gather, const Topology& t, int dim) {
    std::string s = gather ? "all-gather" : "reduce-scatter";
    if (t.kind == TopologyKind::Torus) return s + ' ' + "xyz"[dim];
    if (t.kind == TopologyKind::Switch)
        return s + (switchUsesHalving(t.dims[0]) ? (gather ? " (recursive doubling)" : " (recursive halving)")
                                                 : " (ring)");
    return s;
}

inline std::string onChip(bool gather) { return gather ? "on-chip all-gather" : "on-chip reduce-scatter"; }

inline constexpr const char* kBroadcast = "broadcast";

}  // namespace trainbench::engine::phases
