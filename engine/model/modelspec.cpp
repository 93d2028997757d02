#include "engine/model/modelspec.h"

#include <filesystem>
#include <stdexcept>

namespace trainbench::engine {
namespace {
LayerSpec dense(int units) { LayerSpec s; s.kind = LayerKind::Dense; s.units = units; return s; }
LayerSpec conv(int filters, int kernel, int stride = 1, int padding = 0, bool bias = true) {
    LayerSpec s;
    s.kind = LayerKind::Conv2D;
    s.filters = filters;
    s.kernel = kernel;
    s.stride = stride;
    s.padding = padding;
    s.bias = bias;
    return s;
}
LayerSpec pool(int size, int stride, int padding = 0) {
    LayerSpec s; s.kind = LayerKind::MaxPool2D; s.kernel = size; s.stride = stride; s.padding = padding; return s;
}
LayerSpec simple(LayerKind k) { LayerSpec s; s.kind = k; return s; }
LayerSpec batchNorm(float epsilon) { LayerSpec s; s.kind = LayerKind::BatchNorm; s.epsilon = epsilon; return s; }
LayerSpec bottleneck(int width, int stride, float epsilon) {
    LayerSpec s; s.kind = LayerKind::Bottleneck; s.filters = width; s.stride = stride; s.epsilon = epsilon; return s;
}

// ResNet-50 as torchvision builds it ("v1.5": the stride sits on the 3x3 convolution; convolutions
// have no bias, batch norm has gamma and beta), with Keras' epsilon (keras.applications.ResNet50).
// 25,557,032 parameters for 1000 classes.
std::vector<LayerSpec> resnet50() {
    constexpr float eps = 1.001e-5f;
    std::vector<LayerSpec> l{conv(64, 7, 2, 3, false), batchNorm(eps), simple(LayerKind::ReLU), pool(3, 2, 1)};
    const int blocks[] = {3, 4, 6, 3}, widths[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage)
        for (int b = 0; b < blocks[stage]; ++b) l.push_back(bottleneck(widths[stage], stage > 0 && b == 0 ? 2 : 1, eps));
    l.push_back(simple(LayerKind::GlobalAvgPool));
    l.push_back(dense(LayerSpec::kUnitsPerClass));
    return l;
}

// A residual network small enough to train on 28x28 Fashion-MNIST at tens of steps a second:
// conv 3x3 16 -> bottleneck 16/2 (14x14x64) -> bottleneck 16 -> bottleneck 32/2 (7x7x128) -> pool ->
// dense. Widths of 16 and more keep every convolution on oneDNN's blocked layouts, whose backward
// kernels are jitted (narrower ones fall back to reference loops hundreds of times slower). Batch
// norm momentum 0.9 (PyTorch's default): runs here are a few hundred steps, and with Keras' 0.99 the
// running statistics that evaluation uses would still be far from the batches' (0.99^150 = 22 % of
// their start left after 150 steps).
std::vector<LayerSpec> resnetSmall() {
    const float eps = LayerSpec{}.epsilon;
    std::vector<LayerSpec> l{conv(16, 3, 1, 1, false), batchNorm(eps), simple(LayerKind::ReLU),
                             bottleneck(16, 2, eps),   bottleneck(16, 1, eps), bottleneck(32, 2, eps),
                             simple(LayerKind::GlobalAvgPool), dense(LayerSpec::kUnitsPerClass)};
    for (LayerSpec& s : l) s.momentum = 0.9f;
    return l;
}
}  // namespace

std::vector<LayerSpec> presetLayers(const std::string& name) {
    const LayerSpec relu = simple(LayerKind::ReLU), flatten = simple(LayerKind::Flatten);
    if (name == "logreg") return {flatten, dense(10)};
    // W1 of the benchmarks: 784 -> 512 ReLU -> 256 ReLU -> 10.
    if (name == "mlp") return {flatten, dense(512), relu, dense(256), relu, dense(10)};
    // W2: conv3x3 32, relu, pool 2, conv3x3 64, relu, pool 2, flatten, dense 128 relu, dense 10 (valid padding).
    if (name == "cnn")
        return {conv(32, 3), relu, pool(2, 2), conv(64, 3), relu, pool(2, 2), flatten, dense(128), relu, dense(10)};
    if (name == "resnet_small") return resnetSmall();
    if (name == "resnet50") return resnet50();
    throw std::invalid_argument("unknown model preset '" + name + "' (known: logreg, mlp, cnn, resnet_small, resnet50)");
}

std::vector<std::string> presetNames() { return {"logreg", "mlp", "cnn", "resnet_small", "resnet50"}; }

const char* layerKindName(LayerKind kind) {
    switch (kind) {
        case LayerKind::Dense: return "dense";
        case LayerKind::Conv2D: return "conv2d";
        case LayerKind::MaxPool2D: return "maxpool2d";
        case LayerKind::ReLU: return "relu";
        case LayerKind::Flatten: return "flatten";
        case LayerKind::Dropout: return "dropout";
        case LayerKind::BatchNorm: return "batch_norm";
        case LayerKind::GlobalAvgPool: return "global_avg_pool";
        case LayerKind::Bottleneck: return "bottleneck";
    }
    return "?";
}

std::string modelName(const ModelSpec& spec) {
    if (!spec.preset.empty()) return spec.preset;
    if (!spec.onnx.empty()) return "onnx(" + std::filesystem::path(spec.onnx).filename().string() + ")";
    return "custom(" + std::to_string(spec.layers.size()) + " layers)";
}

}  // namespace trainbench::engine
