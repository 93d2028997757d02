#pragma once
// The virtual clock of a run on emulated devices: the numerics run on this CPU, and every step is
// charged what the target hardware would take (docs/devices.md, "The virtual clock"):
//   step = input wait + forward + backward + optimizer + exposed gradient exchange + per-step overhead
// with the compute parts from the op graph on the device (devicetiming.h), the exchange from the
// topology (collectivemodel.h) and the input wait from the host pipeline's measured time per batch
// against the device's step (infeed). Shapes are static, so a step of a given batch size always
// costs the same: the virtual-time curve does not depend on the host's load.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "engine/emulation/collectiveclock.h"
#include "engine/emulation/devicespec.h"
#include "engine/emulation/devicetiming.h"
#include "engine/emulation/opgraph.h"
#include "engine/emulation/pipelinetiming.h"
#include "engine/model/modelspec.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/telemetry/stepclock.h"
#include "engine/telemetry/stepphases.h"

namespace trainbench::engine {

struct VirtualClockConfig {
    DeviceSpec device;
    Precision precision = Precision::Fp32;
    int replicas = 1;                 // data-parallel replicas; each gets global batch / replicas
    std::optional<Topology> topology; // how the replicas exchange gradients (none for one replica)
    double bucket_bytes = 0.0;        // gradients are all-reduced in buckets of at least this (0: one per layer)
    bool overlap = true;              // buckets go while backward goes on
    // The host input pipeline's time to make one global batch, measured on this host (the infeed).
    // With prefetch the device waits only for what exceeds its own step; without, for all of it.
    double infeed_seconds_per_batch = 0.0;
    bool infeed_prefetch = true;
    // strategy "pipeline": the model's stages on devices of their own (pipelinetiming.h); the step
    // is the schedule's, each stage's record its own.
    std::optional<PipelineLayout> pipeline;
};

// What one step of a batch size costs, part by part (virtual seconds).
// A bucket of the gradient exchange: its floats and the layers that make it up.
struct GradientBucket {
    int64_t floats = 0;
    int layers = 0;
};
// The gradient buckets the engine's exchange forms (GradientSync::plan places them in the buffer),
// from layers' parameter counts given last layer first (OpGraph::layer_params): a bucket closes once
// it holds at least `bucketBytes` (0: one bucket per layer).
std::vector<GradientBucket> gradientBuckets(const std::vector<int64_t>& layerParams, double bucketBytes);

// Floats each replica contributes to the all-reduce that ends a synchronous step: its samples,
// times, loss and stop flag, and its step phases (MultiWorkerStrategy's record exchange).
constexpr int64_t kRecordFloats = 6 + static_cast<int64_t>(kPerReplicaPhaseCount);

struct VirtualStep {
    double input_s = 0.0;
    double forward_s = 0.0;
    double backward_s = 0.0;
    double optimizer_s = 0.0;
    double comm_s = 0.0;          // the whole gradient all-reduce
    double exposed_comm_s = 0.0;  // the part backward does not hide
    double overhead_s = 0.0;
    double matrix_utilisation = 0.0;
    double seconds() const { return input_s + forward_s + backward_s + optimizer_s + exposed_comm_s + overhead_s; }
};

class VirtualClock final : public StepClock {
public:
    // Throws std::invalid_argument when the device cannot time the model at this precision.
    VirtualClock(VirtualClockConfig config, ModelSpec model, Dims sampleShape, int64_t numClasses,
                 OptimizerConfig optimizer);

    void step(StepRecord& record) override;
    void eval(EvalRecord& record) override;

    // The cost of a step of `globalBatch` examples (computed once per size).
    const VirtualStep& stepCost(int64_t globalBatch);
    // A pipeline's step at a global batch, stage by stage (only with config().pipeline).
    const PipelineStepCost& pipelineCost(int64_t globalBatch);
    // The op graph and timing of one replica's step at a global batch (for reports and estimates).
    const StepTiming& replicaTiming(int64_t globalBatch);
    const OpGraph& replicaGraph(int64_t globalBatch);
    const VirtualClockConfig& config() const { return config_; }

private:
    struct Entry {
        OpGraph graph;
        StepTiming timing;
        VirtualStep step;
        std::optional<PipelineStepCost> pipeline;
    };
    Entry& entry(int64_t globalBatch);
    double evalSeconds(int64_t samples);

    VirtualClockConfig config_;
    ModelSpec model_;
    Dims sample_;
    int64_t classes_;
    OptimizerConfig optimizer_;
    std::unique_ptr<CollectiveClock> collective_;
    std::map<int64_t, Entry> steps_;
    std::map<int64_t, double> evalBatches_;  // per-replica eval batch -> seconds
};

// Writes a step's virtual parts into a step record: input, forward, backward, optimizer, exposed
// exchange, other (the overhead) and their sum as step_seconds.
void chargeStep(StepRecord& record, const VirtualStep& step);

// The per-replica batch of a global batch over `replicas`: global / replicas, and an error naming
// both when they do not divide (static shapes: every replica gets the same batch).
int64_t replicaBatch(int64_t globalBatch, int replicas);

}  // namespace trainbench::engine
