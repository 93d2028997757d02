#include "engine/model/modelspec.h"

#include <stdexcept>

namespace trainbench::engine {
namespace {
LayerSpec dense(int units) { LayerSpec s; s.kind = LayerKind::Dense; s.units = units; return s; }
LayerSpec conv(int filters, int kernel) {
    LayerSpec s; s.kind = LayerKind::Conv2D; s.filters = filters; s.kernel = kernel; return s;
}
LayerSpec pool(int size) { LayerSpec s; s.kind = LayerKind::MaxPool2D; s.kernel = size; s.stride = size; return s; }
LayerSpec simple(LayerKind k) { LayerSpec s; s.kind = k; return s; }
}  // namespace

std::vector<LayerSpec> presetLayers(const std::string& name) {
    const LayerSpec relu = simple(LayerKind::ReLU), flatten = simple(LayerKind::Flatten);
    if (name == "logreg") return {flatten, dense(10)};
    // W1 of the benchmarks: 784 -> 512 ReLU -> 256 ReLU -> 10.
    if (name == "mlp") return {flatten, dense(512), relu, dense(256), relu, dense(10)};
    // W2: conv3x3 32, relu, pool 2, conv3x3 64, relu, pool 2, flatten, dense 128 relu, dense 10 (valid padding).
    if (name == "cnn")
        return {conv(32, 3), relu, pool(2), conv(64, 3), relu, pool(2), flatten, dense(128), relu, dense(10)};
    throw std::invalid_argument("unknown model preset '" + name + "' (known: logreg, mlp, cnn)");
}

const char* layerKindName(LayerKind kind) {
    switch (kind) {
        case LayerKind::Dense: return "dense";
        case LayerKind::Conv2D: return "conv2d";
        case LayerKind::MaxPool2D: return "maxpool2d";
        case LayerKind::ReLU: return "relu";
        case LayerKind::Flatten: return "flatten";
        case LayerKind::Dropout: return "dropout";
    }
    return "?";
}

}  // namespace trainbench::engine
