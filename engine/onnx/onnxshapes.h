#pragma once
// The shape arithmetic an exporter leaves in a graph, done once at import (issue 22): PyTorch writes
// `x.view(x.size(0), x.size(1), heads, dh)` as Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
// The importer knows every value's per-example shape, so such chains compute constants, and the
// Reshape gets a fixed per-example shape. The batch dimension is a symbol: it may be passed along
// (into a Reshape's first place), never computed with. Internal to engine/onnx.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace trainbench::engine::onnx {

// The batch dimension in a folded shape ("N").
inline constexpr int64_t kBatchSymbol = std::numeric_limits<int64_t>::min();

// An integer tensor of known values: a scalar or 1-D.
struct IntTensor {
    bool scalar = false;
    std::vector<int64_t> values;
};

// At most this many values in an integer constant (a shape, indices, a Slice's bounds).
inline constexpr int64_t kMaxIntConstant = 4096;

// An INT64 / INT32 tensor (a Constant's or an initializer) as an IntTensor; OnnxError at `where` when
// it is not a scalar or 1-D, over kMaxIntConstant values, or its data does not match its dims.
IntTensor readIntTensor(const ::onnx::TensorProto& t, const std::string& where);

class ShapeFolder {
public:
    using Resolve = std::function<std::string(const std::string&)>;
    ShapeFolder(const graph::Graph& g, const std::map<std::string, graph::Dims>& shapes, int64_t opset, Resolve resolve)
        : g_(g), shapes_(shapes), opset_(opset), resolve_(std::move(resolve)) {}

    void add(const std::string& name, IntTensor t) { ints_[name] = std::move(t); }
    const IntTensor* find(const std::string& name) const;

    // Folds `n` when it computes only from known integers and values' shapes: Shape; Gather, Unsqueeze,
    // Squeeze, Concat, Slice, Cast, Add, Sub, Mul, Div of known integers. True when folded (its output
    // is then known); false when it is an op on values for the importer to map.
    bool fold(const ::onnx::NodeProto& n, const std::string& where);

    // A Reshape of a value to the shape `shape` (known integers): the per-example dims it becomes.
    graph::Dims reshapeTarget(const std::string& shape, const graph::Dims& input, const std::string& where) const;
    // An Unsqueeze's or Squeeze's axes (an attribute before opset 13, an input from it), normalized to
    // `rank` (the output's rank for Unsqueeze, the input's for Squeeze).
    std::vector<int64_t> axes(const ::onnx::NodeProto& n, int64_t rank, const std::string& where) const;
    // The whole-tensor input shape of a value for Unsqueeze / Squeeze, and the per-example result.
    graph::Dims unsqueezed(const ::onnx::NodeProto& n, const graph::Dims& input, bool squeeze, const std::string& where) const;

    // A known-integer input i of n; OnnxError naming it when it is not one.
    const IntTensor& intInput(const ::onnx::NodeProto& n, int i, const char* role, const std::string& where) const;

private:
    std::vector<int64_t> rawAxes(const ::onnx::NodeProto& n, const std::string& where) const;

    const graph::Graph& g_;
    const std::map<std::string, graph::Dims>& shapes_;
    int64_t opset_;
    Resolve resolve_;
    std::map<std::string, IntTensor> ints_;
};

}  // namespace trainbench::engine::onnx
