#pragma once
// tpu_pod: synchronous data parallelism over the TensorCores (v4: the chips) of an emulated Cloud
// TPU slice. The slice's shape and links are the device plan's and its step time the virtual
// clock's; here the numerics of every core run as one pass over the global batch, each core's
// share of the batch normalised on its own (per-core batch norm, as on a TPU).
#include <memory>

#include "engine/strategy/strategy.h"
#include "engine/strategy/strategyspec.h"

namespace trainbench::engine {

// spec.replicas: the slice's replicas. Throws std::invalid_argument when the run is not emulated:
// there is no TPU here to run on.
std::unique_ptr<Strategy> makeTpuPodStrategy(const StrategySpec& spec);

}  // namespace trainbench::engine
