#pragma once
// A pipeline step (strategy.type "pipeline") on emulated devices: each stage a device of the catalog,
// each micro-batch's forward and backward on it timed from the ops of the stage's layers at the
// micro-batch size (devicetiming.h), activations handed to the next stage over the devices' link
// (NVLink, PCIe, a TPU's ICI), and the schedule played out in time (pipelineschedule.h). The step is
// the schedule's makespan, then the stages' updates (in parallel: the slowest), then the device's
// per-step overhead. Memory per stage is its layers' parameters, gradients and optimizer state and
// the activations of the micro-batches it holds at once (1F1B: at most K-k; GPipe: M; with
// recomputation only their inputs, and one micro-batch's activations).
#include <cstdint>
#include <vector>

#include "engine/emulation/devicespec.h"
#include "engine/emulation/topology.h"
#include "engine/model/modelspec.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/model/pipelineschedule.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

struct PipelineLayout {
    int stages = 2;
    int micro = 4;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    std::vector<int> boundaries;  // where stages 1.. begin (layer indices); empty: balanced by the device's times
    bool recompute = false;       // each backward runs its micro-batch's forward again first
    LinkParams link;              // between adjacent stages' devices
};

// What one stage keeps in its device's memory, by shapes; activations counted in fp32 as an op
// graph counts them (checkMemory halves them for bf16).
struct StageMemory {
    double params_bytes = 0.0, grads_bytes = 0.0, optimizer_bytes = 0.0, activation_bytes = 0.0;
    double total() const { return params_bytes + grads_bytes + optimizer_bytes + activation_bytes; }
};

struct PipelineStepCost {
    int micro = 0;                       // micro-batches per step
    int64_t micro_batch = 0;             // examples per micro-batch (the largest, when they differ)
    std::vector<int> starts;             // where each stage begins in the model's layers
    std::vector<double> forward_s;       // per stage: one micro-batch's forward
    std::vector<double> backward_s;      // per stage: one micro-batch's backward (with its recomputed forward)
    std::vector<double> optimizer_s;     // per stage: its layers' update, once a step
    std::vector<double> handoff_s;       // per boundary k (stage k to k+1): one micro-batch's activations
    std::vector<StageMemory> memory;     // per stage
    double overhead_s = 0.0;             // the device's per-step overhead
    PipelineTimeline timeline;           // the schedule played out (forwards and backwards only)
    // Makespan + the slowest stage's update + the per-step overhead.
    double stepSeconds() const;
    // Per stage: time in its own forwards, backwards and update.
    double busySeconds(int stage) const;
    // Per stage: time sending its activations and gradients (2 M hand-offs per boundary it touches).
    double sendSeconds(int stage) const;
};

// Throws ModelError for layers that do not fit, std::invalid_argument for a layout the model cannot
// take (fewer layers than stages, wrong boundaries, a batch smaller than the micro-batches).
PipelineStepCost pipelineStepCost(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses,
                                  int64_t globalBatch, const OptimizerConfig& optimizer, const DeviceSpec& device,
                                  Precision precision, const PipelineLayout& layout);

}  // namespace trainbench::engine
