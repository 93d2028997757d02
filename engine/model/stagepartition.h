#pragma once
// Where a pipeline's stages begin in a model's layer list: balanced by each layer's estimated time,
// or as the user put them (strategy.stage_boundaries), checked.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/layers/layer.h"

namespace trainbench::engine {

// Cuts the layers (their costs, in order) into `stages` contiguous non-empty parts so that the
// costliest part costs as little as possible; returns where each part starts (the first at 0).
// Throws std::invalid_argument when there are fewer layers than stages.
std::vector<int> balanceStages(const std::vector<double>& costs, int stages);

// A layer's estimated time in a training step of `batch` examples, from its ops' FLOPs and bytes
// (Layer::describeOps) at a nominal 50 GFLOP/s and 15 GB/s (one core of these hosts): only the
// ratios between layers matter here.
double estimatedLayerSeconds(const Layer& layer, int64_t batch);

// The starts of `stages` stages: `boundaries` (where stages 1.. begin, as indices into the
// layer list) checked, or balanced by estimated time when empty. Throws std::invalid_argument
// naming the problem ("strategy.stage_boundaries[1]: 2 is not after 3").
std::vector<int> stageStarts(const std::vector<std::unique_ptr<Layer>>& layers, int stages,
                             const std::vector<int>& boundaries, int64_t batch);

}  // namespace trainbench::engine
