#pragma once
// A quantized graph (engine/inference/quantizedgraph.h) as an ONNX model in the standard QDQ form
// (opset 13): int8 weights dequantized per output channel, each activation int8 holds in codes as a
// QuantizeLinear -> DequantizeLinear pair with its scale, the ops between them as in the fp32 export
// (onnxexport.h). The metadata holds the calibration, the sizes and the test accuracies next to
// fp32's (docs/onnx.md). readQuantizedOnnx() reads our own files back exactly; any other QDQ pattern
// is refused naming the node.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/inference/quantizedgraph.h"
#include "engine/onnx/onnxexport.h"

namespace trainbench::engine::onnx {

// What a quantized model's file records beyond the graph: measured when it was made.
struct QuantizationRecord {
    int64_t fp32_weight_bytes = 0;        // of the fp32 graph it was quantized from
    int64_t int8_weight_bytes = 0;        // QuantizedGraph::weightBytes(), as written (set by the export)
    int64_t test_examples = 0;            // 0: not measured (the accuracies are then absent)
    std::optional<double> fp32_accuracy;  // top-1 on the test set, a fraction
    std::optional<double> int8_accuracy;
    std::string isa;                      // the oneDNN ISA int8 ran with (effectiveIsa())

    bool operator==(const QuantizationRecord&) const = default;
};

struct QuantizedModel {
    inference::QuantizedGraph graph;
    QuantizationRecord record;
};

// The serialized ModelProto. GraphError when the graph does not validate.
std::string exportQuantizedOnnx(const inference::QuantizedGraph& graph, const QuantizationRecord& record,
                                const ExportOptions& options = {});
// Writes it to `path` atomically. OnnxError naming the path when it cannot be written.
void writeQuantizedOnnx(const inference::QuantizedGraph& graph, const QuantizationRecord& record, const std::string& path,
                        const ExportOptions& options = {});

// A file exportQuantizedOnnx() wrote: the same QuantizedGraph (s8 codes, scales, activations,
// calibration) and record. OnnxError naming `origin` and the node for anything else: a QDQ pattern
// of another kind, an op int8 does not run, a metadata key missing or malformed.
QuantizedModel importQuantizedOnnx(std::string_view bytes, const std::string& origin);
QuantizedModel readQuantizedOnnx(const std::string& path);

}  // namespace trainbench::engine::onnx
