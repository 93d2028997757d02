#pragma once
// The virtual clock of a parameter_server run on emulated devices (docs/devices.md, "Parameter
// servers on the virtual clock"). Each of W workers is one device on a host of its own; K parameter
// servers are CPU hosts holding 1/K of the variables each; every host has one full-duplex network
// link. A worker's step, with P the fp32 parameter bytes:
//   worker = input wait + pull (α + P·β) + forward + backward + push (α + P·β) + update + overhead
// with the update the servers' optimizer step on their shards (optimizer bytes / (K × server memory
// bandwidth)). The servers are shared: per round of W steps (one per worker) each server's link
// carries W·P/K bytes each way and applies W updates, so every worker finishes a step every
//   round = max(worker, W·P / (K·B), W·update)       (B = 1/β, the link's bytes per second)
// and waits round - worker for busy servers. W workers train W steps per round: the job's time per
// step is round / W. Shapes are static, so the figures never depend on the host's timing.
#include <cstdint>
#include <map>
#include <string>

#include "engine/emulation/topology.h"
#include "engine/emulation/virtualclock.h"

namespace trainbench::engine {

struct ParameterServerClockConfig {
    DeviceSpec device;                       // each worker's device
    Precision precision = Precision::Fp32;
    int workers = 1;
    int servers = 1;
    LinkParams network;                      // every host's link, one direction
    double server_memory_bytes_per_s = 0.0;  // what a parameter server's update streams at
    // A worker host's time to make one worker batch; with prefetch the device waits only for what
    // exceeds the rest of its step.
    double infeed_seconds_per_batch = 0.0;
    bool infeed_prefetch = true;
};

// What bounds the rounds: the workers' own steps, the servers' links, or the servers' updates.
enum class PsBound { Workers, ServerLinks, ServerUpdates };
std::string psBoundName(PsBound bound);  // "workers", "server links", "server updates"

// One worker's step and the round it sits in (virtual seconds).
struct ParameterServerStep {
    double input_s = 0.0;
    double forward_s = 0.0;
    double backward_s = 0.0;
    double pull_s = 0.0;
    double push_s = 0.0;
    double update_s = 0.0;   // the servers' optimizer step on their shards, which the push waits for
    double overhead_s = 0.0;
    double worker_s = 0.0;          // all of the above
    double server_link_s = 0.0;     // W·P / (K·B)
    double server_update_s = 0.0;   // W·update
    double round_s = 0.0;           // max(worker, server link, server update)
    double queue_s = 0.0;           // round - worker: waiting for busy servers
    PsBound bound = PsBound::Workers;
    int workers = 1;
    double matrix_utilisation = 0.0;
    // The job's time per step: round / W, the worker's parts in proportion (the exchange is pull,
    // push and the queue; the update is the optimizer).
    VirtualStep jobStep() const;
};

class ParameterServerClock final : public StepClock {
public:
    // Throws std::invalid_argument for fewer than one worker or server, a link or server bandwidth
    // that is not positive, or a device that cannot time the model at this precision.
    ParameterServerClock(ParameterServerClockConfig config, ModelSpec model, Dims sampleShape, int64_t numClasses,
                         OptimizerConfig optimizer);

    // An asynchronous step: record.samples is one worker's batch. The steps row gets the job's share
    // of the round; the worker's own row (record.replicas) its whole step.
    void step(StepRecord& record) override;
    // Evaluations run on one device.
    void eval(EvalRecord& record) override;

    // The step of a worker batch of `batch` examples (computed once per size).
    const ParameterServerStep& stepCost(int64_t batch);
    const ParameterServerClockConfig& config() const { return config_; }

private:
    ParameterServerClockConfig config_;
    VirtualClock device_;  // one worker's device: forward, backward, overhead, evaluation
    std::map<int64_t, ParameterServerStep> steps_;
};

}  // namespace trainbench::engine
