#pragma once
// strategy.type "tensor": every dense and convolution layer split across T devices (threads, each with
// its own thread budget and oneDNN stream), as Megatron-LM splits a transformer's matrix products over
// the GPUs of a node. Walking the layers in the order they run:
//   * a layer whose input every device holds is split by its outputs (a dense layer's units, a
//     convolution's filters: "column parallel"); each device computes its slice of the output, and
//     the layers that work per channel or feature after it (ReLU, pooling, batch norm, dropout,
//     flatten, global average pooling) run on that slice alone;
//   * the next dense or convolution layer is split by its inputs ("row parallel"): each device
//     multiplies its slice of the input by its slice of the weights, and one all-reduce sums the
//     partial outputs, so every device holds the whole output again (the bias is added once, by
//     device 0). A ReLU after it runs after the sum, never inside the split layer;
//   * backward mirrors it: a column-parallel layer's input gradient is a partial sum, all-reduced;
//     a row-parallel layer's needs no exchange.
// So a pair of layers costs one all-reduce forward and one backward, as in Megatron's MLP block. A
// model that ends on a column-parallel layer gathers the logits. A layer that cannot be split
// (a bottleneck block) runs whole on every device, on the same input, and keeps its input whole.
//
// One copy of the parameters, gradients, state and optimizer state exists: model() and optimizer(),
// which evaluation, checkpoints and warm starts use. Each step copies every device's slices from the
// model, and each device's gradients (and batch norm statistics) back into the model's, which then
// takes one update: the step equals a single device's on the same batch (up to the order of the
// float sums inside the split products).
//
// Per step and device the run store gets a record (replica_steps, the device as its rank): compute,
// comm (summing and copying in the all-reduces) and wait (blocked on the other devices).
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/model/layerstack.h"
#include "engine/strategy/strategy.h"
#include "engine/strategy/strategyspec.h"

namespace trainbench::engine {

// How a layer of the model runs under tensor parallelism.
enum class TensorSplit {
    Whole,     // every device runs all of it on the whole input
    Columns,   // split by outputs: each device makes a slice of the output
    Rows,      // split by inputs: each device takes its slice of the input; outputs summed
    PerSlice,  // per channel / feature: runs on the slice its input is split into
};
const char* tensorSplitName(TensorSplit split);

// The split of every layer of `layers` (a model's, in execution order) across `devices` devices, and
// after which layers the activations are all-reduced. Throws std::invalid_argument naming the layer
// when a split layer has fewer outputs or inputs than devices.
struct TensorPlan {
    std::vector<TensorSplit> splits;
    bool gatherLogits = false;  // the last layer is column parallel: the logits are gathered
};
TensorPlan planTensorSplits(const std::vector<std::unique_ptr<Layer>>& layers, int devices);

class TensorStrategy final : public Strategy {
public:
    // spec.threads: each device's threads. Throws std::invalid_argument for fewer than 1 device.
    TensorStrategy(const ReplicaSpec& spec, int devices);
    ~TensorStrategy() override;

    std::string name() const override { return "tensor"; }
    int replicas() const override { return 1; }
    // "cpu:TxD": D devices of T threads.
    std::string devices() const override;
    Model& model() override { return *model_; }
    Optimizer& optimizer() override { return *optimizer_; }
    void bindThreads() override;
    std::vector<prof::OpRow> opStats() override;
    StrategyStep step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                      const std::function<void()>& midpoint) override;

    const TensorPlan& plan() const { return plan_; }
    // Floats of parameters device `d` holds (its slices, and every unsplit layer whole).
    int64_t paramsOn(int d) const;

private:
    struct Device;
    struct Run;
    class Aborted;

    void deviceLoop(int d);
    void runDevice(int d, const std::function<void()>& midpoint);
    // Sums `count` floats at `data` over the devices (every device calls it with its own buffer).
    void allReduce(Device& dev, float* data, size_t count);
    // Every device's slice of the logits (its [rows, width] block) into each device's whole logits.
    void gatherLogits(Device& dev, const Tensor& mine, Tensor& whole);
    // Waits until every device has arrived (or one failed: throws Aborted).
    void barrier(Device& dev);
    void abort();

    std::unique_ptr<CpuDevice> evalDevice_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Optimizer> optimizer_;
    TimedUpdate update_;
    TensorPlan plan_;
    std::vector<std::unique_ptr<Device>> devices_;

    // The all-reduces' and the gather's shared buffer, and the buffers the devices published.
    AlignedBuffer scratch_;
    std::vector<float*> published_;
    std::vector<size_t> publishedCounts_;

    std::mutex mutex_;
    std::condition_variable cv_;
    int arrived_ = 0;
    uint64_t barrierGeneration_ = 0;
    BatchView batch_;
    uint64_t stepSeed_ = 0;
    uint64_t generation_ = 0;  // the step the devices are on
    int running_ = 0;
    bool quit_ = false;
    bool aborted_ = false;
};

}  // namespace trainbench::engine
