#pragma once
// Layer specs, models and random labelled batches for the model tests (test_model, test_resnet).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/model.h"
#include "engine/util/rng.h"
#include "tests/engine/reference.h"

namespace trainbench::engine::testmodels {

inline LayerSpec of(LayerKind k) { LayerSpec s; s.kind = k; return s; }
inline LayerSpec dense(int units) { LayerSpec s = of(LayerKind::Dense); s.units = units; return s; }
inline LayerSpec conv(int filters, int kernel, int stride = 1, int padding = 0, bool bias = true) {
    LayerSpec s = of(LayerKind::Conv2D);
    s.filters = filters;
    s.kernel = kernel;
    s.stride = stride;
    s.padding = padding;
    s.bias = bias;
    return s;
}
inline const LayerSpec relu = of(LayerKind::ReLU), flatten = of(LayerKind::Flatten);

inline ModelSpec custom(std::vector<LayerSpec> layers) { return ModelSpec{"", std::move(layers), {}, {}, {}}; }
inline ModelSpec preset(const std::string& name) { return ModelSpec{name, presetLayers(name), {}, {}, {}}; }

struct Batch {
    int64_t n;
    testref::Values x;
    std::vector<int32_t> y;
};
inline Batch randomBatch(const Model& m, int64_t n, uint64_t seed) {
    Batch b{n, testref::randomValues(n * testref::product(m.sampleShape()), seed), {}};
    Rng rng(seed + 1);
    for (int64_t i = 0; i < n; ++i) b.y.push_back(static_cast<int32_t>(rng.below(static_cast<uint64_t>(m.numClasses()))));
    return b;
}

}  // namespace trainbench::engine::testmodels
