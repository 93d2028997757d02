#pragma once
// An ONNX model as an inference graph: trainbench's own exports exactly (fused ReLUs re-fused, the
// metadata read back), and any model made only of the Graph IR's ops with the attributes its nodes
// have (square kernels, symmetric pads, any Conv group, Gemm with transB 0 or 1, Clip with constant
// bounds), Constant, Identity and inference Dropout removed on the way (docs/onnx.md). Anything else
// is refused naming the node, its op type, the opset and what is supported (issue 22 widens this).
#include <string>
#include <string_view>

#include "engine/graph/graph.h"

namespace trainbench::engine::onnx {

// `bytes` is a serialized ModelProto; `origin` names it in errors (the file's path). OnnxError for
// anything that is not a model the IR can hold; the graph validates (GraphError rewrapped as
// OnnxError naming `origin`).
struct ImportOptions {
    // Take initializers that have dims but no data (a model stripped to shapes, for estimates: the
    // graph is marked weightless and nothing may run it).
    bool shapes_only = false;
};
graph::Graph importOnnx(std::string_view bytes, const std::string& origin, const ImportOptions& options = {});
// Reads `path` (at most kMaxFileBytes, checked before reading) and imports it. metadata.source_run,
// when the file has none, becomes "ONNX file <path>".
graph::Graph readOnnx(const std::string& path, const ImportOptions& options = {});

}  // namespace trainbench::engine::onnx
