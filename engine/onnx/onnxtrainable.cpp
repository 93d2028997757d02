#include "engine/onnx/onnxtrainable.h"

#include <memory>

#include "engine/graph/layersfromgraph.h"
#include "engine/model/layerstack.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnximport.h"
#include "engine/util/errors.h"

namespace trainbench::engine::onnx {

namespace {

ModelSpec resolve(const ModelSpec& spec, const Dims* sampleShape, int64_t classes) {
    if (spec.onnx.empty()) return spec;
    const std::string where = "model.onnx " + spec.onnx;
    graph::Graph g;
    try {
        g = readOnnx(spec.onnx, {.shapes_only = true});
    } catch (const OnnxError& e) {
        throw ModelError("model.onnx: " + std::string(e.what()));
    }
    if (sampleShape && (g.sample_shape != *sampleShape || g.classes != classes))
        throw ModelError(where + ": the model takes examples of " + dimsText(g.sample_shape) + " and outputs " +
                         std::to_string(g.classes) + " classes; the data has " + dimsText(*sampleShape) + " and " +
                         std::to_string(classes) + " (set data.shape to the model's, or use data the model was made for)");
    graph::TrainableLayers t;
    try {
        t = graph::layersFromGraph(g);
    } catch (const graph::GraphError& e) {
        throw ModelError(where + ": cannot train it: " + e.what() +
                         "; estimate, predict, serve and quantize take it as it is");
    }
    ModelSpec out = spec;
    out.layers = std::move(t.layers);
    out.layer_names = std::move(t.layer_names);
    auto weights = std::make_shared<ModelWeights>();
    weights->params = std::move(t.params);
    weights->state = std::move(t.state);
    weights->origin = where;
    out.initial = std::move(weights);
    return out;
}

}  // namespace

ModelSpec trainableModel(const ModelSpec& spec) { return resolve(spec, nullptr, 0); }

ModelSpec trainableModel(const ModelSpec& spec, const Dims& sampleShape, int64_t classes) {
    return resolve(spec, &sampleShape, classes);
}

}  // namespace trainbench::engine::onnx
