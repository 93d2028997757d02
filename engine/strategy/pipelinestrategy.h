#pragma once
// strategy.type "pipeline": the model's layers cut into K stages, each a device of its own (a thread
// with its own thread budget and oneDNN stream) holding only its layers' work, as GPipe and PipeDream
// place stages on accelerators. A step's global batch is split into M micro-batches that flow through
// the stages: activations forward from stage k to k+1, their gradients back, each hand-off a copy into
// the receiving stage's buffer (what a send between devices is). The stages run the schedule's order
// (pipelineschedule.h: GPipe's fill-drain or 1F1B). Each stage sums its layers' parameter gradients
// over the micro-batches, the loss divided by the global batch, so the update is the one a single
// device makes on the whole batch (up to the order of the float sums).
//
// One copy of the parameters, gradients, batch-norm state and optimizer state exists: model() and
// optimizer(), which evaluation, checkpoints and warm starts use. Each stage's layers work on its
// part of those buffers; a stage keeps one set of layers per micro-batch it may hold at once (its
// activations: M for GPipe, K-k for 1F1B on stage k) — or, with recompute, one set: a micro-batch's
// activations are made again from its input (the hand-off it received) just before its backward,
// with the same dropout masks and without updating batch norm's running statistics twice. Batch
// norm normalises each micro-batch on its own (as GPipe does); dropout draws per micro-batch.
//
// Per step and stage the run store gets a record (replica_steps, the stage as its rank): compute
// (forward, loss, backward, summing gradients), comm (copying hand-offs) and wait (blocked on the
// neighbouring stage: the pipeline's bubble, and any imbalance).
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/model/layerstack.h"
#include "engine/model/pipelineschedule.h"
#include "engine/strategy/strategy.h"
#include "engine/strategy/strategyspec.h"

namespace trainbench::engine {

struct PipelineSpec {
    int stages = 2;
    int microBatches = 4;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    // Where stages 1..K-1 begin, as indices into the model's layer list (Model::layers(), execution
    // order); empty: balanced by each layer's estimated time at the micro-batch size.
    std::vector<int> boundaries;
    // Activation recomputation (gradient checkpointing): a stage keeps only each micro-batch's input
    // and one set of layers, and runs a micro-batch's forward again just before its backward.
    bool recompute = false;
};

class PipelineStrategy final : public Strategy {
public:
    // spec.threads: each stage's threads. Throws std::invalid_argument when the model has fewer layers
    // than stages or the boundaries are wrong (naming the entry).
    PipelineStrategy(const ReplicaSpec& spec, const PipelineSpec& pipeline);
    ~PipelineStrategy() override;

    std::string name() const override { return "pipeline"; }
    int replicas() const override { return 1; }
    // "cpu:TxK": K stage devices of T threads.
    std::string devices() const override;
    Model& model() override { return *model_; }
    Optimizer& optimizer() override { return *optimizer_; }
    // The caller's thread runs stage 0 and evaluation, on the threads of one stage.
    void bindThreads() override;
    std::vector<prof::OpRow> opStats() override;
    // Throws ModelError when the batch has fewer examples than micro-batches; rethrows what a stage threw.
    StrategyStep step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                      const std::function<void()>& midpoint) override;

    // Where each stage begins in model().layers(): the boundaries given, or balanced by estimated
    // layer times at first and, from the third step on, by the layer times that step measured.
    const std::vector<int>& stageStarts() const { return starts_; }
    static constexpr int64_t kMeasuredStep = 3;
    // The sets of layers stage k keeps (micro-batches it may hold at once; 1 with recompute).
    int slotsOf(int stage) const;
    // Forwards stage k ran again for recomputation in the last step.
    int recomputedOf(int stage) const;

private:
    struct Slot;
    struct Stage;
    struct Handoff;
    class Aborted;

    void stageLoop(int k);
    // Runs stage k's ops of the step; `afterForwards` (may be empty) once its last forward is done.
    void runStage(int k, const std::function<void()>& afterForwards);
    void forward(Stage& s, int k, int micro);
    // Runs stage k's layers forward on micro-batch `micro`'s input in `slot`; the last stage also
    // computes the loss's gradient (adding the loss to its sum when `countLoss`).
    Tensor* forwardLayers(Stage& s, Slot& slot, int k, int micro, bool countLoss);
    // Points slot.input at micro-batch `micro`'s input on stage k (received already).
    void bindInput(Stage& s, Slot& slot, int k, int micro);
    void backward(Stage& s, int k, int micro);
    // Waits for micro-batch `micro` in `box` from this step; the seconds waited go to `wait`.
    Handoff& receive(std::vector<Handoff>& box, int micro, double& wait);
    void send(std::vector<Handoff>& box, int micro, const Tensor* t);
    void abort();
    // Gives each stage the layers from starts[k] and binds them (every set) to the model's
    // parameters and state and to the set's own gradients. Between steps only.
    void place(const std::vector<int>& starts);
    void rebalanceFromMeasurements();

    PipelineSpec spec_;
    std::unique_ptr<CpuDevice> evalDevice_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Optimizer> optimizer_;
    TimedUpdate update_;
    std::vector<int> starts_;
    std::vector<std::unique_ptr<Stage>> stages_;
    // Between stage k and k+1: activations forward (forward_[k]) and their gradients back (backward_[k]), per micro-batch.
    std::vector<std::vector<Handoff>> forward_, backward_;
    std::vector<std::vector<PipelineOp>> ops_;

    // The step the stages are on, handed over by step().
    std::mutex mutex_;
    std::condition_variable cv_;
    BatchView batch_;
    std::vector<int64_t> microRows_, microFirst_;  // per micro-batch: examples and first row
    int64_t stepIndex_ = 0;
    uint64_t stepSeed_ = 0;
    uint64_t generation_ = 0;
    int running_ = 0;
    bool quit_ = false;
    bool aborted_ = false;  // a stage failed this step: the others stop waiting
    int64_t stepsRun_ = 0;
    bool measuring_ = false;  // this step times every layer (read by the stages after the hand-over)
};

}  // namespace trainbench::engine
