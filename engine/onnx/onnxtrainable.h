#pragma once
// An imported ONNX model made trainable: its graph mapped onto the engine's layers
// (engine/graph/layersfromgraph.h) with its initializers as the starting weights (issue 22).
#include <cstdint>

#include "engine/model/modelspec.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine::onnx {

// `spec` itself when it names no ONNX file; else a copy whose `layers` and `initial` come from the
// file at spec.onnx (read with its weights). ModelError "model.onnx <path>: ..." when the file does
// not import, has no weights (stripped to shapes), or has nodes the engine cannot train (each named).
ModelSpec trainableModel(const ModelSpec& spec);
// The same, also checking that the model takes the data's examples and classes.
ModelSpec trainableModel(const ModelSpec& spec, const Dims& sampleShape, int64_t classes);

}  // namespace trainbench::engine::onnx
