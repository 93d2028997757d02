#include "engine/emulation/footprint.h"

#include <string_view>

#include "engine/layers/bottleneck.h"

namespace trainbench::engine {

namespace {
double elements(const Dims& dims) {
    double count = 1.0;
    for (const int64_t d : dims) count *= static_cast<double>(d);
    return count;
}

}  // namespace

// What one training step keeps per example, in floats. The count follows the tensors the engine
// holds, not one per layer:
//  * the input batch the forward pass reads (the trainer's buffer, kept until backward);
//  * each layer's output, except where a layer hands on its input: ReLU and Dropout work in place
//    (a ReLU fused into the layer before is that layer's post-op), and Flatten is a view of a
//    plain input;
//  * the gradient of each counted output, when backward computes it: for the last layer (the loss
//    gradient) and where the next layer needs its input gradient (none does before the first
//    layer with parameters). In-place layers update the gradient in place, too;
//  * plain copies: conv2d and maxpool2d outputs are in oneDNN's blocked layouts, and a flatten or
//    dense layer reading one reorders it into a plain copy (Flatten's output is that copy), and
//    its gradient back;
//  * Dropout's mask, one float per element.
// Not counted: oneDNN scratchpads and pooling workspaces (indices), layouts a convolution picks
// for its own input or weights, and the padding of blocked layouts.
double activationFloatsPerExample(const std::vector<std::unique_ptr<Layer>>& layers, const Dims& sampleShape) {
    double floats = elements(sampleShape);
    for (double f : activationFloatsPerLayer(layers)) floats += f;
    return floats;
}

std::vector<double> activationFloatsPerLayer(const std::vector<std::unique_ptr<Layer>>& layers) {
    auto kindOf = [&](size_t i) { return std::string_view(layers[i]->kind()); };
    auto inPlace = [&](size_t i) { return kindOf(i) == "relu" || kindOf(i) == "dropout"; };
    // Whether layer i reads a blocked tensor: the last layer before it that made a tensor of its
    // own is a convolution or a pooling (the model's input is plain).
    auto readsBlocked = [&](size_t i) {
        while (i > 0 && inPlace(i - 1)) --i;
        return i > 0 && (kindOf(i - 1) == "conv2d" || kindOf(i - 1) == "maxpool2d");
    };
    std::vector<double> perLayer(layers.size(), 0.0);
    for (size_t i = 0; i < layers.size(); ++i) {
        double& floats = perLayer[i];
        const Layer& layer = *layers[i];
        const double output = elements(layer.outputShape());
        const bool outputGradient = i + 1 == layers.size() || layers[i + 1]->needsInputGrad();
        if (kindOf(i) == "dropout") floats += output;
        if (inPlace(i)) continue;
        if (kindOf(i) == "flatten") {
            if (readsBlocked(i)) floats += output * (outputGradient ? 2 : 1);
            continue;
        }
        if (kindOf(i) == "dense" && readsBlocked(i)) {
            floats += elements(layer.inputShape()) * (layer.needsInputGrad() ? 2 : 1);
        }
        floats += output * (outputGradient ? 2 : 1);
        // A residual block keeps its branches' outputs (and their gradients) as well.
        if (const auto* block = dynamic_cast<const Bottleneck*>(&layer))
            for (const Layer* part : block->parts()) floats += 2 * elements(part->outputShape());
    }
    return perLayer;
}


double optimizerStateFloatsPerParam(const OptimizerConfig& config) {
    if (config.kind == OptimizerKind::Adam) return 2.0;
    return config.momentum > 0.0f ? 1.0 : 0.0;
}

}  // namespace trainbench::engine
