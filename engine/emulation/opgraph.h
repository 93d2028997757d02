#pragma once
// A model's training step (or evaluation batch) as a list of ops with their shapes, FLOPs and bytes,
// plus its memory footprint: built from the experiment's ModelSpec without allocating parameters or
// activations, so that an emulated device can time a step (devicetiming.h) and `trainbench-cli
// estimate` can plan a model too large to train here. The ops are those a real step registers in the
// per-op statistics, layout reorders left out (they depend on this machine's oneDNN), and so is the
// loss (a few element-wise passes over batch x classes).
#include <cstdint>

#include "engine/device/opdesc.h"
#include "engine/model/modelspec.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

// One training step of one replica on `batch` examples: forward, backward, and the optimizer's
// update of each layer's parameters. Throws ModelError as Model would for layers that do not fit.
OpGraph trainingStepGraph(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, int64_t batch,
                          const OptimizerConfig& optimizer);

// One evaluation batch: the forward pass in inference mode. Its footprint counts the parameters and
// the activations only.
OpGraph evaluationGraph(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, int64_t batch);

}  // namespace trainbench::engine
