#pragma once
// The parts of an ONNX model the importer translates one at a time: an initializer (TensorProto)
// and a node (NodeProto). Internal to engine/onnx; the messages name the file, and the tensor or
// node, and what of it is not supported.
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "engine/graph/graph.h"

namespace trainbench::engine::onnx {

// A float32 initializer from raw_data or float_data; its element count is checked against
// kMaxInitializerElements (kMaxStrippedElements for one stripped to shapes) and the bytes present before anything is allocated.
// With `stripped` given, a tensor that has dims but no data at all (a model stripped to shapes) is
// taken with no values and *stripped set; without it, such a tensor is refused.
graph::Initializer importInitializer(const ::onnx::TensorProto& t, const std::string& origin, bool* stripped = nullptr);

// What importNode() leaves to the importer, which sees the initializers: a Gemm with transB = 0
// reads its weight as [in, out] (the IR's is [out, in]).
struct NodeFixups {
    bool transpose_weight = false;
    // Softmax and LayerNormalization: the axis it names (negative from the back), which must be the
    // input's last (the importer knows the input's rank).
    std::optional<int64_t> last_axis;
    // A window with auto_pad SAME_UPPER or SAME_LOWER: pads that keep ceil(input / stride) outputs,
    // the odd one at the end (UPPER) or the start (LOWER); the importer computes them from the input.
    enum class SamePad { None, Upper, Lower } same_pad = SamePad::None;
    // A pooling with ceil_mode 1: the last window may hang over the end, as empty cells (never the
    // max, never counted in an average); the importer adds them as padding from the input's size.
    bool ceil_mode = false;
};

// A node of the Graph IR's op types with the attributes the IR can hold; `opset` is the model's
// default-domain opset (named in the errors). A Clip of opset 11 on keeps its bound inputs (the
// importer reads them from the initializers); of opset 6 to 10 its attributes become the bounds.
graph::Node importNode(const ::onnx::NodeProto& n, int64_t opset, const std::string& origin, NodeFixups& fixups);

// The op types the importer accepts, for error messages ("Add, BatchNormalization, ..."): importNode()'s
// and the ones the importer removes (Constant, Identity, Dropout).
std::string supportedOpList();

}  // namespace trainbench::engine::onnx
