#pragma once
// How one training step runs over the replicas of a run: one interface, one class per strategy, as
// in tf.distribute. The trainer owns the loop (data, evaluation, records); a strategy turns a global
// batch into updated parameters and says where the time went.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/warmstart.h"
#include "engine/data/pipeline/inputpipeline.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/timedupdate.h"
#include "engine/strategy/strategyspec.h"
#include "engine/telemetry/runrecords.h"

namespace trainbench::engine {

struct StrategyStep {
    double loss = 0.0;          // mean over the global batch
    double comm_seconds = 0.0;  // mean over replicas of ReplicaStep::comm_seconds
    double wait_seconds = 0.0;  // mean over replicas of ReplicaStep::wait_seconds
    std::vector<ReplicaStep> replicas;  // one per replica of a data-parallel strategy; empty for single
    bool stop_requested = false;  // a process of a multi-process job asked to stop: all stop after this step
    // Asynchronous strategies: which step finished, and the updates it made on each server.
    int64_t step = 0;
    std::vector<ParamUpdate> updates;
};

class Strategy {
public:
    virtual ~Strategy() = default;
    virtual std::string name() const = 0;
    virtual int replicas() const = 0;
    // What the run stored as its devices, e.g. "cpu:2" (one device of 2 threads) or "cpu:1x2"
    // (2 replicas of 1 thread each).
    virtual std::string devices() const = 0;
    // Replica 0's model and optimizer: what evaluation and checkpoints use.
    virtual Model& model() = 0;
    virtual Optimizer& optimizer() = 0;
    // Call once on the training thread before the first step (thread budget, FTZ/DAZ).
    virtual void bindThreads() = 0;
    // Puts the parameters and optimizer state of a training checkpoint into every replica this
    // process holds. Throws CheckpointError (naming the shard and sizes) if it does not fit.
    virtual void restore(const Checkpoint& checkpoint);
    // Starts every replica this process holds from another run's checkpoint (warmStartFrom): its
    // parameters and model state, and its optimizer state when options say so. Throws
    // CheckpointError naming the first difference when the checkpoint holds another model.
    virtual void warmStart(const Checkpoint& checkpoint, const WarmStartOptions& options);
    // One synchronous step on a global batch: forward, loss, backward, gradient exchange, update.
    // `step` is 1-based; `midpoint` (may be empty) is called once the forward pass is done, when the
    // caller may prepare the next batch; the batch's rows may be overwritten.
    // Synchronous strategies only.
    virtual StrategyStep step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                              const std::function<void()>& midpoint) = 0;

    // Asynchronous strategies (parameter_server) train several steps at once on different workers:
    // the trainer hands each batch over with dispatch() and learns which steps finished from
    // completed(). Their step() is not used.
    virtual bool asynchronous() const { return false; }
    // Hands a copy of the batch to a free worker; blocks while every worker is busy. Throws when the
    // job cannot go on (no worker left, a parameter server lost), naming what failed and the step.
    virtual void dispatch(const BatchView& batch, int64_t step, uint64_t stepSeed);
    // Steps finished since the last call, in the order they finished; with `all`, first waits until
    // every dispatched step has finished.
    virtual std::vector<StrategyStep> completed(bool all);
    // Before an evaluation (and, with `optimizerToo`, a checkpoint): makes model() (and optimizer())
    // hold the current parameters (and optimizer state) where those live elsewhere.
    virtual void fetchState(bool optimizerToo) { (void)optimizerToo; }
    // The run is over: tasks that serve the strategy (parameter servers, workers) are told to exit.
    virtual void finish() {}
    // Per-op statistics of the training steps this process ran, summed over its replicas.
    virtual std::vector<prof::OpRow> opStats() { return model().device().ops().snapshot(); }
};

// One device. Each layer is updated as soon as its gradients are final, while they are still in cache.
class SingleStrategy final : public Strategy {
public:
    // A device, model and optimizer of its own, built from the spec. With statisticsShards > 1 the
    // batch stands for that many emulated replicas, each normalising its own part of it (per-core
    // batch norm).
    explicit SingleStrategy(const ReplicaSpec& spec, int statisticsShards = 1);
    // The model and optimizer given (not owned): the trainer's one-device form, probes and benches.
    SingleStrategy(Model& model, Optimizer& optimizer) : model_(model), optimizer_(optimizer), update_(model, optimizer) {}
    std::string name() const override { return "single"; }
    int replicas() const override { return 1; }
    std::string devices() const override;
    Model& model() override { return model_; }
    Optimizer& optimizer() override { return optimizer_; }
    void bindThreads() override { model_.device().bindThreads(); }
    StrategyStep step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                      const std::function<void()>& midpoint) override;

private:
    std::unique_ptr<CpuDevice> ownDevice_;  // null when the model was given
    std::unique_ptr<Model> ownModel_;
    std::unique_ptr<Optimizer> ownOptimizer_;
    Model& model_;
    Optimizer& optimizer_;
    TimedUpdate update_;
    Tensor gradLogits_;
};

}  // namespace trainbench::engine
