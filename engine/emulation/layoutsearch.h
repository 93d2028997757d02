#pragma once
// The layout planner's search (docs/model-parallelism.md): every data x pipeline x tensor split of
// a cluster, micro-batch size, recomputation and pipeline schedule; the ones that cannot be used
// or do not fit memory rejected with why, the rest ranked by step time or cost. An exhaustive search
// and a fast one (coordinate descent from a few memory-aware starts) that estimates a small part
// of the layouts.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/emulation/layoutmodel.h"

namespace trainbench::engine {

struct LayoutSpace {
    std::vector<Recompute> recompute{Recompute::None, Recompute::Selective, Recompute::Full};
    int max_interleave = 4;       // model chunks per GPU tried (1: 1F1B only)
    int64_t max_micro_batch = 0;  // largest micro-batch tried; 0: every divisor of the batch per replica
    bool tensor_within_node = false;  // only tensor degrees up to the GPUs of a node
};

enum class LayoutOrder { Time, Cost };

struct RejectedLayout {
    Layout layout;    // the first layout rejected for this reason
    std::string why;  // "t=16 does not divide 96 heads", "memory 92.1 GiB > 80.0 GiB per device (...)"
    int64_t count = 1;  // layouts rejected for the same reason (structural reasons are grouped)
    double memory_bytes = 0.0;  // a memory rejection's need; 0 for a structural one
};

struct LayoutSearchResult {
    std::vector<LayoutEstimate> ranked;   // layouts that fit, best first
    std::vector<RejectedLayout> rejected;  // memory first (nearest to fitting first), then structural reasons
    int64_t evaluated = 0;   // layouts estimated
    int64_t candidates = 0;  // layouts of the space that can be used (structurally)
};

// Every layout of the space that layoutProblem() accepts; the others into `rejected` (grouped by
// reason) when given.
std::vector<Layout> enumerateLayouts(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                                     const LayoutSpace& space, std::vector<RejectedLayout>* rejected = nullptr);

// Estimates every layout. std::invalid_argument when the cluster has no device or no layout can use it.
LayoutSearchResult searchLayoutsExhaustive(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                                           const LayoutSpace& space, const LayoutAssumptions& assumptions = {},
                                           LayoutOrder order = LayoutOrder::Time);

// Coordinate descent: from one start per tensor degree within a node and recomputation option
// (micro-batch 1, the fewest stages whose weights and optimizer state fit), move to the best neighbour until none
// is better; neighbours change one coordinate: t, p (against d or against t) or the micro-batch to
// the next smaller or larger value, recomputation or chunks to any other. Only the layouts it
// visits are estimated; `ranked` and `rejected` hold those. When no start can hold the weights and
// optimizer state, every layout is estimated (the exhaustive search's result).
LayoutSearchResult searchLayoutsFast(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                                     const LayoutSpace& space, const LayoutAssumptions& assumptions = {},
                                     LayoutOrder order = LayoutOrder::Time);

// For a model that does not fit one device: per recomputation option, the fewest GPUs (tensor
// within a node tried before pipeline stages) on which one replica fits at `replica_batch` sequences
// in micro-batches of 1, with the memory per device it needs. cluster.devices is ignored; an option
// that fits nowhere up to `max_devices` is left out.
std::vector<LayoutEstimate> splitsThatFit(const TransformerCosts& costs, int64_t replica_batch, const GpuCluster& cluster,
                                          const LayoutAssumptions& assumptions = {}, int max_devices = 4096);

}  // namespace trainbench::engine
