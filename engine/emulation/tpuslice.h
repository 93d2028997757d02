#pragma once
// Cloud TPU slices by the names Google gives them ("v3-32": TPU v3, 32 TensorCores): how many
// chips, their torus (2D for v2/v3, 3D for v4) and which dimensions wrap around, so that `tpu_pod`
// can time its gradient all-reduce on the slice a user picked. Shapes and wrap-around, and where
// they come from: docs/collectives-model.md, "TPU slices".
#include <string>
#include <vector>

#include "engine/emulation/topology.h"

namespace trainbench::engine {

struct TpuSlice {
    std::string name;        // as given, e.g. "v4-128"
    int generation = 0;      // 2, 3 or 4
    int cores = 0;           // TensorCores: the number in the name
    int cores_per_chip = 2;  // two TensorCores per chip on v2, v3 and v4
    std::vector<int> dims;   // the chip grid, X first: 2 extents (v2, v3) or 3 (v4)
    std::vector<bool> wrap;  // per dimension: whether its end chips are linked

    int chips() const { return cores / cores_per_chip; }
};

// Throws std::invalid_argument naming the bad name and listing the valid ones of its generation
// (or the valid generations).
TpuSlice parseTpuSlice(const std::string& name);

// Every slice name of a generation (2, 3 or 4), smallest first; empty for others.
std::vector<std::string> tpuSliceNames(int generation);

// The slice as a Topology: its chip torus with `ici` links (one direction of one inter-chip link)
// and its cores joined by `on_chip` links, for the hierarchical all-reduce.
Topology sliceTopology(const TpuSlice& slice, LinkParams ici, LinkParams on_chip);

}  // namespace trainbench::engine
