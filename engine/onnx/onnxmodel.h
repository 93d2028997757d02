#pragma once
// The steps exportOnnx() and importOnnx() are made of, on libonnx's ModelProto: shared with the
// quantized model's exporter and importer (onnxquantized.h). Internal to engine/onnx.
#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

#include "engine/graph/graph.h"
#include "engine/onnx/onnxexport.h"

namespace trainbench::engine::onnx {

// The fp32 model of a graph (validated first: GraphError), as exportOnnx() serializes it.
::onnx::ModelProto exportModel(const graph::Graph& graph, const ExportOptions& options);
// The serialized model; OnnxError when it cannot be (over 2 GiB).
std::string serializeModel(const ::onnx::ModelProto& model);
// `bytes` written to `path` atomically; OnnxError naming the path when they cannot be.
void writeModelBytes(const std::string& bytes, const std::string& path);
void addMetadata(::onnx::ModelProto& model, const std::string& key, const std::string& value);

// A ModelProto from `bytes` (capped at kMaxFileBytes) that has a graph; OnnxError naming `origin`.
::onnx::ModelProto parseModel(std::string_view bytes, const std::string& origin);
// The bytes of the file at `path`, its size checked against kMaxFileBytes before it is read.
std::string readModelBytes(const std::string& path);
// The graph of a parsed fp32 model: opset, initializers, input and output, nodes, metadata, the
// export's additions undone, validated (GraphError rewrapped as OnnxError naming `origin`).
graph::Graph importModel(const ::onnx::ModelProto& model, const std::string& origin, bool shapesOnly = false);
// The same, releasing each initializer's data once it is converted (the model is left without its
// weights): the import then holds the weights about once, not twice.
graph::Graph importModel(::onnx::ModelProto&& model, const std::string& origin, bool shapesOnly = false);

}  // namespace trainbench::engine::onnx
