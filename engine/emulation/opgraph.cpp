#include "engine/emulation/opgraph.h"

#include <stdexcept>
#include <string>

#include "engine/emulation/graphops.h"
#include "engine/emulation/importedgraph.h"
#include "engine/layers/opcosts.h"
#include "engine/emulation/footprint.h"
#include "engine/model/layerstack.h"
#include "engine/optim/optimizer.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

constexpr double kFloatBytes = 4.0;

OpGraph describe(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, int64_t batch,
                 const OptimizerConfig* optimizer) {
    if (batch <= 0) throw std::invalid_argument("op graph: the batch must be positive, got " + std::to_string(batch));
    if (!spec.onnx.empty()) {
        // An imported model: its graph's ops, for the examples and classes it was exported for.
        const std::shared_ptr<const graph::Graph> g = importedGraph(spec.onnx);
        if (g->sample_shape != sampleShape || g->classes != numClasses)
            throw ModelError("model.onnx " + spec.onnx + ": the model takes examples of " + dimsText(g->sample_shape) +
                             " and outputs " + std::to_string(g->classes) + " classes; the data has " +
                             dimsText(sampleShape) + " and " + std::to_string(numClasses) +
                             " (set data.shape to the model's, or use data the model was made for)");
        return optimizer ? trainingOpGraph(*g, batch, *optimizer) : inferenceOpGraph(*g, batch);
    }
    // Layers only build descriptors: no parameter, plan or activation is allocated.
    CpuDevice device(1);
    const LayerStack stack = buildLayerStack(spec, sampleShape, numClasses, device);
    const bool training = optimizer != nullptr;
    OpGraph graph;
    graph.batch = batch;
    graph.param_count = stack.paramCount;
    std::vector<OpDesc> backward;  // runs last layer first
    for (size_t i = 0; i < stack.layers.size(); ++i) {
        const Layer& layer = *stack.layers[i];
        std::vector<OpDesc> ops;
        layer.describeOps(batch, training, ops);
        const std::string name = std::string(layer.kind()) + "_" + std::to_string(i);
        for (OpDesc& op : ops) {
            op.layer = name;
            (op.part == StepPart::Forward ? graph.ops : backward).push_back(std::move(op));
        }
    }
    if (training) {
        const auto update = Optimizer::create(*optimizer, 1);  // for its cost per parameter only
        for (size_t i = stack.layers.size(); i-- > 0;) {
            const std::string name = std::string(stack.layers[i]->kind()) + "_" + std::to_string(i);
            for (auto it = backward.rbegin(); it != backward.rend(); ++it)
                if (it->layer == name) graph.ops.push_back(*it);
            // Each layer is updated as soon as its gradients are final (TimedUpdate).
            if (const int64_t params = stack.layers[i]->paramCount(); params > 0) {
                graph.layer_params.push_back(params);
                OpDesc op(opcost::optimizerUpdate(update->updateKind(), params, update->flopsPerParam(),
                                                  update->bytesPerParam()),
                          StepPart::Optimizer);
                op.layer = name;
                graph.ops.push_back(std::move(op));
            }
        }
    }
    const double params = static_cast<double>(stack.paramCount);
    graph.params_bytes = params * kFloatBytes;
    if (training) {
        graph.grads_bytes = params * kFloatBytes;
        graph.optimizer_bytes = params * optimizerStateFloatsPerParam(*optimizer) * kFloatBytes;
        graph.activation_bytes = static_cast<double>(batch) *
                                 activationFloatsPerExample(stack.layers, sampleShape) * kFloatBytes;
    } else {
        // Inference keeps no gradients: the input and the largest two outputs in flight at once are
        // a fair bound; the sum of all outputs is a safe one, used here.
        double floats = 1.0;
        for (int64_t d : sampleShape) floats *= static_cast<double>(d);
        for (const auto& l : stack.layers) {
            double out = 1.0;
            for (int64_t d : l->outputShape()) out *= static_cast<double>(d);
            floats += out;
        }
        graph.activation_bytes = static_cast<double>(batch) * floats * kFloatBytes;
    }
    return graph;
}

}  // namespace

OpGraph trainingStepGraph(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, int64_t batch,
                          const OptimizerConfig& optimizer) {
    return describe(spec, sampleShape, numClasses, batch, &optimizer);
}

OpGraph evaluationGraph(const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses, int64_t batch) {
    return describe(spec, sampleShape, numClasses, batch, nullptr);
}

}  // namespace trainbench::engine
