#pragma once
// What a model is made of, as the experiment file describes it: a list of layers applied in order to
// an input of shape [batch, channels, height, width]. The loss (softmax + cross-entropy) is implicit.
#include <memory>
#include <string>
#include <vector>

namespace trainbench::engine {

enum class LayerKind { Dense, Conv2D, MaxPool2D, ReLU, Flatten, Dropout, BatchNorm, GlobalAvgPool, Bottleneck };

struct LayerSpec {
    // Dense units meaning "one unit per class of the data set": how presets end (resnet50 classifies
    // ImageNet's 1000 classes or Fashion-MNIST's 10 alike). Model resolves it; files give numbers.
    static constexpr int kUnitsPerClass = -1;

    LayerKind kind = LayerKind::Dense;
    int units = 0;          // Dense: output features (or kUnitsPerClass)
    int filters = 0;        // Conv2D: output channels; Bottleneck: width (output channels 4 * filters)
    int kernel = 3;         // Conv2D / MaxPool2D: square kernel (pool size)
    int stride = 1;         // Conv2D / MaxPool2D / Bottleneck (for pooling, 0 means "same as kernel")
    int padding = 0;        // Conv2D / MaxPool2D: padding on each side (zeros; for pooling, ignored cells)
    bool bias = true;       // Dense / Conv2D
    float rate = 0.0f;      // Dropout: probability of dropping an activation
    float momentum = 0.99f; // BatchNorm / Bottleneck: running = momentum * running + (1 - momentum) * batch
    float epsilon = 1e-3f;  // BatchNorm / Bottleneck: added to the variance before the square root
};

// Starting weights of a model (an imported ONNX graph's initializers), in the order the Model binds
// them: every layer's parameters, then every layer's state (batch norm running mean and variance).
struct ModelWeights {
    std::vector<float> params;
    std::vector<float> state;
    std::string origin;  // where they come from, for errors ("model.onnx /x/mlp.onnx")
};

struct ModelSpec {
    std::string preset;              // "logreg", "mlp", "cnn", "resnet_small", "resnet50", or empty
    std::vector<LayerSpec> layers;   // filled for a preset (expanded) or a layer list; empty with `onnx`
    // An imported model: the ONNX file's path (experiment files' "model": {"onnx": ...}). Estimates
    // count its ops from the graph (engine/emulation/graphops.h); to train it, the app resolves the
    // graph into `layers` and `initial` (engine/graph/layersfromgraph.h) and keeps `onnx` as its name.
    std::string onnx;
    // Weights the Model starts from instead of its seeded initialisation; shared by every replica.
    std::shared_ptr<const ModelWeights> initial;
    // Per layer, the name its ops carry in the per-op statistics (an imported model's ONNX node
    // names, so a user finds their layer in the profile); empty: "<kind>_<index>" for composite
    // layers, nothing for the others.
    std::vector<std::string> layer_names;
};

// The layer list of a preset; throws std::invalid_argument for an unknown name.
std::vector<LayerSpec> presetLayers(const std::string& name);
// The names presetLayers knows, in the order the docs list them.
std::vector<std::string> presetNames();
// What runs record as the model: the preset's name, "onnx(resnet50.onnx)" or "custom(7 layers)".
std::string modelName(const ModelSpec& spec);
// The experiment file's name of a layer type ("batch_norm", "global_avg_pool", ...).
const char* layerKindName(LayerKind kind);

}  // namespace trainbench::engine
