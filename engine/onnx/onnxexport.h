#pragma once
// An inference graph as an ONNX model (opset 13, docs/onnx.md): initializers as raw little-endian
// float32, the batch dimension symbolic ("N"), fused ReLUs as Relu nodes, the metadata (input
// scaling, class names, source run) in metadata_props. importOnnx() reads it back exactly.
#include <string>

#include "engine/graph/graph.h"

namespace trainbench::engine::onnx {

struct ExportOptions {
    std::string producer_version;  // the trainbench version ("0.21.0"); the producer is the metadata's
    std::string graph_name = "trainbench";
};

// The serialized ModelProto. GraphError when the graph does not validate.
std::string exportOnnx(const graph::Graph& graph, const ExportOptions& options = {});
// Writes it to `path` atomically. OnnxError naming the path when it cannot be written.
void writeOnnx(const graph::Graph& graph, const std::string& path, const ExportOptions& options = {});

}  // namespace trainbench::engine::onnx
