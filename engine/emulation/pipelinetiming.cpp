#include "engine/emulation/pipelinetiming.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/emulation/devicetiming.h"
#include "engine/emulation/footprint.h"
#include "engine/emulation/inferenceestimate.h"
#include "engine/emulation/opgraph.h"
#include "engine/model/layerstack.h"
#include "engine/model/stagepartition.h"

namespace trainbench::engine {

namespace {

// The layer index of an op of the graph ("conv2d_3", "global_avg_pool_7": after the last '_').
size_t layerIndexOf(const OpDesc& op) {
    const size_t at = op.layer.rfind('_');
    if (at == std::string::npos) throw std::logic_error("pipeline timing: op '" + op.cost.shape + "' names no layer");
    return static_cast<size_t>(std::stoul(op.layer.substr(at + 1)));
}

double elementsOf(const Dims& d) {
    double n = 1.0;
    for (int64_t v : d) n *= static_cast<double>(v);
    return n;
}

}  // namespace

double PipelineStepCost::stepSeconds() const {
    const double update = optimizer_s.empty() ? 0.0 : *std::max_element(optimizer_s.begin(), optimizer_s.end());
    return timeline.stepSeconds + update + overhead_s;
}

double PipelineStepCost::busySeconds(int stage) const {
    const size_t k = static_cast<size_t>(stage);
    return timeline.busySeconds.at(k) + optimizer_s.at(k);
}

double PipelineStepCost::sendSeconds(int stage) const {
    // Activations go forward and gradients back: a stage sends M of each over the boundaries it has.
    const size_t k = static_cast<size_t>(stage);
    const double M = static_cast<double>(micro);
    double s = 0.0;
    if (k + 1 < starts.size()) s += M * handoff_s[k];  // activations to the next stage
    if (k > 0) s += M * handoff_s[k - 1];              // gradients to the previous one
    return s;
}

PipelineStepCost pipelineStepCost(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses,
                                  int64_t globalBatch, const OptimizerConfig& optimizer, const DeviceSpec& device,
                                  Precision precision, const PipelineLayout& layout) {
    const int K = layout.stages, M = layout.micro;
    if (K < 1 || M < 1) throw std::invalid_argument("pipeline timing: stages and micro-batches must be at least 1");
    if (globalBatch < M)
        throw std::invalid_argument("a batch of " + std::to_string(globalBatch) + " examples cannot make " +
                                    std::to_string(M) + " micro-batches (strategy.micro_batches)");
    PipelineStepCost c;
    c.micro = M;
    // Micro-batches as the real pipeline cuts them (the first batch % M one larger): the largest sets the pace.
    c.micro_batch = (globalBatch + M - 1) / M;
    const OpGraph graph = trainingStepGraph(spec, sampleShape, numClasses, c.micro_batch, optimizer);
    const StepTiming timing = stepTime(graph, device, precision);
    CpuDevice describeOnly(1);  // layers build descriptors only: nothing is allocated
    const LayerStack stack = buildLayerStack(spec, sampleShape, numClasses, describeOnly);
    const size_t L = stack.layers.size();

    // Each layer's forward, backward and update on the device at the micro-batch.
    struct LayerTimes {
        double forward = 0.0, backward = 0.0, update = 0.0;
    };
    std::vector<LayerTimes> times(L);
    for (size_t i = 0; i < graph.ops.size(); ++i) {
        const OpDesc& op = graph.ops[i];
        const size_t layer = layerIndexOf(op);
        if (layer >= L) throw std::logic_error("pipeline timing: op of layer " + std::to_string(layer) + " of " + std::to_string(L));
        const double s = timing.ops.at(i).seconds * static_cast<double>(op.calls);
        switch (op.part) {
            case StepPart::Forward: times[layer].forward += s; break;
            case StepPart::Backward: times[layer].backward += s; break;
            case StepPart::Optimizer: times[layer].update += s; break;
        }
    }
    if (layout.boundaries.empty()) {
        std::vector<double> cost(L);
        for (size_t i = 0; i < L; ++i) cost[i] = times[i].forward + times[i].backward;
        c.starts = balanceStages(cost, K);
    } else {
        c.starts = stageStarts(stack.layers, K, layout.boundaries, c.micro_batch);
    }

    const std::vector<double> actPerLayer = activationFloatsPerLayer(stack.layers);
    const double count = std::max<double>(1.0, static_cast<double>(graph.param_count));
    const double paramBytes = graph.params_bytes / count, gradBytes = graph.grads_bytes / count,
                 stateBytes = graph.optimizer_bytes / count;
    const double element = bytesPerElement(precision);
    c.forward_s.assign(static_cast<size_t>(K), 0.0);
    c.backward_s.assign(static_cast<size_t>(K), 0.0);
    c.optimizer_s.assign(static_cast<size_t>(K), 0.0);
    c.memory.assign(static_cast<size_t>(K), StageMemory{});
    for (int k = 0; k < K; ++k) {
        const size_t first = static_cast<size_t>(c.starts[static_cast<size_t>(k)]);
        const size_t last = k + 1 < K ? static_cast<size_t>(c.starts[static_cast<size_t>(k) + 1]) : L;
        double params = 0.0, act = 0.0;
        for (size_t i = first; i < last; ++i) {
            c.forward_s[static_cast<size_t>(k)] += times[i].forward;
            c.backward_s[static_cast<size_t>(k)] += times[i].backward;
            c.optimizer_s[static_cast<size_t>(k)] += times[i].update;
            params += static_cast<double>(stack.layers[i]->paramCount());
            act += actPerLayer[i];
        }
        // The stage's input per example (the model's input, or the hand-off it receives).
        const double input = elementsOf(first == 0 ? sampleShape : stack.layers[first - 1]->outputShape());
        const double held = microBatchesInFlight(layout.schedule, K, M, k);
        const double kept = layout.recompute ? held * input + act  // inputs, and one micro-batch's activations
                                             : held * (input + act);
        StageMemory& mem = c.memory[static_cast<size_t>(k)];
        mem.params_bytes = params * paramBytes;
        mem.grads_bytes = params * gradBytes;
        mem.optimizer_bytes = params * stateBytes;
        mem.activation_bytes = kept * static_cast<double>(c.micro_batch) * 4.0;
        if (layout.recompute) c.backward_s[static_cast<size_t>(k)] += c.forward_s[static_cast<size_t>(k)];
    }
    // Hand-offs: the boundary layer's output for one micro-batch, over the link.
    c.handoff_s.assign(static_cast<size_t>(std::max(K - 1, 0)), 0.0);
    for (int k = 0; k + 1 < K; ++k) {
        const size_t boundary = static_cast<size_t>(c.starts[static_cast<size_t>(k) + 1]) - 1;
        const double bytes = elementsOf(stack.layers[boundary]->outputShape()) * static_cast<double>(c.micro_batch) * element;
        c.handoff_s[static_cast<size_t>(k)] = layout.link.alpha_s + bytes * layout.link.beta_s_per_byte;
    }
    c.overhead_s = timing.overhead_s;
    c.timeline = simulatePipeline(layout.schedule, K, M, c.forward_s, c.backward_s, c.handoff_s);
    return c;
}

}  // namespace trainbench::engine
