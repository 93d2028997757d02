#pragma once
// What a model is made of, as the experiment file describes it: a list of layers applied in order to
// an input of shape [batch, channels, height, width]. The loss (softmax + cross-entropy) is implicit.
#include <string>
#include <vector>

namespace trainbench::engine {

enum class LayerKind { Dense, Conv2D, MaxPool2D, ReLU, Flatten, Dropout };

struct LayerSpec {
    LayerKind kind = LayerKind::Dense;
    int units = 0;          // Dense: output features
    int filters = 0;        // Conv2D: output channels
    int kernel = 3;         // Conv2D / MaxPool2D: square kernel (pool size)
    int stride = 1;         // Conv2D / MaxPool2D (for pooling, 0 means "same as kernel")
    int padding = 0;        // Conv2D: zero padding on each side
    bool bias = true;       // Dense / Conv2D
    float rate = 0.0f;      // Dropout: probability of dropping an activation
};

struct ModelSpec {
    std::string preset;              // "logreg", "mlp", "cnn", or empty for a custom list
    std::vector<LayerSpec> layers;   // always filled (presets are expanded)
};

// The layer list of a preset; throws std::invalid_argument for an unknown name.
std::vector<LayerSpec> presetLayers(const std::string& name);
const char* layerKindName(LayerKind kind);

}  // namespace trainbench::engine
