#pragma once
// What training a model keeps in memory, by shapes: the activations one step holds per example, and
// the optimizer's state per parameter. The profiler's memory footprint of a real run and the op graph
// of an emulated device (engine/emulation/opgraph.h) both count with these.
#include <memory>
#include <vector>

#include "engine/layers/layer.h"
#include "engine/optim/optimizerconfig.h"

namespace trainbench::engine {

// Floats one training step keeps per example (input, outputs, their gradients, copies, masks), for a
// stack of layers as the model runs them (engine/model/layerstack.h). footprint.cpp says what counts.
double activationFloatsPerExample(const std::vector<std::unique_ptr<Layer>>& layers, const Dims& sampleShape);
// The same per layer (what each layer adds; the model's input not included): a pipeline stage keeps
// the floats of its own layers.
std::vector<double> activationFloatsPerLayer(const std::vector<std::unique_ptr<Layer>>& layers);

// Floats of optimizer state per parameter: Adam 2 (m, v), SGD with momentum 1, plain SGD 0.
double optimizerStateFloatsPerParam(const OptimizerConfig& config);

}  // namespace trainbench::engine
