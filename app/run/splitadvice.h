#pragma once
// When one GPU's memory is too small for a run (or nearly full): the model cut into pipeline stages,
// each on an emulated GPU of its own, without and with activation recomputation — the fewest stages
// at which the fullest stage's GPU stays below engine::kNearCapacity, and what that GPU then holds
// (pipelinetiming.h's StageMemory). What the out-of-memory error, `estimate` and the capacity verdict
// propose (domain.md: "when the model or its activations do not fit, … split the model itself").
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.h"
#include "app/run/deviceplan.h"
#include "engine/emulation/devicememory.h"
#include "engine/tensor/tensor.h"

namespace trainbench::app {

struct MemorySplit {
    int stages = 0;
    int micro_batches = 0;
    bool recompute = false;
    engine::MemoryCheck memory;  // the fullest stage's GPU
};

// Stages tried up to this many (and no more than the model has layers).
inline constexpr int kMaxSplitStages = 8;

// For a run of one replica (strategy.type single or pipeline) on an emulated GPU: the fewest stages
// that fit without recomputation and, when it needs fewer stages (or nothing fits without it), the
// fewest with it; a pipeline run is also offered recomputation at its own stage count. Micro-batches:
// a pipeline run's own; otherwise four per stage (a bubble of at most (K-1)/(5K-1)), no more than the
// batch has examples, preferring a count that divides it. Empty when the run is of another kind, on
// another device, or nothing up to kMaxSplitStages fits.
std::vector<MemorySplit> pipelineSplitsThatFit(const Experiment& x, const DevicePlan& plan, int64_t globalBatch,
                                               const engine::Dims& shape, int64_t classes);

// The experiment changes that make the split, as --set arguments would give them:
// "strategy.type=pipeline strategy.stages=2 strategy.micro_batches=8 [strategy.recompute=true]".
std::vector<std::string> splitSettings(const MemorySplit& split);

// One line: "2 stages (strategy.type=pipeline, ...): 11.2 GiB of 16.0 GiB on the fullest GPU (70 %)".
std::string describeSplit(const MemorySplit& split);

// What the out-of-memory error and the near-capacity note add: "; as a pipeline across GPUs: …"
// (empty without splits).
std::string splitAdvice(const std::vector<MemorySplit>& splits);

// The splits as the run store keeps them (attribute memory.splits) and `estimate --json` prints them:
// [{"stages", "micro_batches", "recompute", "needed_bytes", "capacity_bytes", "params_bytes",
//   "grads_bytes", "optimizer_bytes", "activation_bytes"}].
nlohmann::json splitsJson(const std::vector<MemorySplit>& splits);

}  // namespace trainbench::app
