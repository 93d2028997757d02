#include "engine/onnx/onnxnodes.h"

#include <cstring>
#include <limits>
#include <vector>

#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxformat.h"

namespace trainbench::engine::onnx {

namespace {

std::string nodeWhere(const ::onnx::NodeProto& n, const std::string& origin) {
    return origin + ": node '" + n.name() + "' (" + n.op_type() + ")";
}

const ::onnx::AttributeProto* findAttribute(const ::onnx::NodeProto& n, const char* name) {
    for (const ::onnx::AttributeProto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

int64_t intAttribute(const ::onnx::NodeProto& n, const char* name, int64_t fallback, const std::string& where) {
    const ::onnx::AttributeProto* a = findAttribute(n, name);
    if (!a) return fallback;
    if (a->type() != ::onnx::AttributeProto::INT) throw OnnxError(where + ": attribute '" + name + "' is not an int");
    return a->i();
}

// An ints attribute of `count` values; `fallback` (count copies) when absent.
std::vector<int64_t> intsAttribute(const ::onnx::NodeProto& n, const char* name, int count, int64_t fallback,
                                   const std::string& where) {
    const ::onnx::AttributeProto* a = findAttribute(n, name);
    if (!a) return std::vector<int64_t>(static_cast<size_t>(count), fallback);
    if (a->type() != ::onnx::AttributeProto::INTS || a->ints_size() != count)
        throw OnnxError(where + ": attribute '" + name + "' is not " + std::to_string(count) + " ints (2-D windows only)");
    return {a->ints().begin(), a->ints().end()};
}

void requireNone(const ::onnx::NodeProto& n, std::initializer_list<const char*> allowed, const std::string& where) {
    for (const ::onnx::AttributeProto& a : n.attribute()) {
        bool ok = false;
        for (const char* name : allowed) ok = ok || a.name() == name;
        if (!ok) throw OnnxError(where + ": attribute '" + a.name() + "' is not supported");
    }
}

void requireInt(const ::onnx::NodeProto& n, const char* name, int64_t want, const std::string& where) {
    const int64_t got = intAttribute(n, name, want, where);
    if (got != want)
        throw OnnxError(where + ": attribute '" + name + "' = " + std::to_string(got) + " is not supported (only " +
                        std::to_string(want) + ")");
}

bool ceilMode(const ::onnx::NodeProto& n, const std::string& where) {
    const int64_t ceil = intAttribute(n, "ceil_mode", 0, where);
    if (ceil != 0 && ceil != 1) throw OnnxError(where + ": attribute 'ceil_mode' = " + std::to_string(ceil) + " is not 0 or 1");
    return ceil == 1;
}

void windowAttributes(const ::onnx::NodeProto& n, graph::Node& node, NodeFixups& fixups, const std::string& where) {
    const ::onnx::AttributeProto* autoPad = findAttribute(n, "auto_pad");
    if (autoPad && autoPad->s() != "NOTSET" && autoPad->s() != "VALID" && autoPad->s() != "SAME_UPPER" &&
        autoPad->s() != "SAME_LOWER")
        throw OnnxError(where + ": auto_pad '" + autoPad->s() + "' is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
    if (autoPad && autoPad->s().rfind("SAME_", 0) == 0) {
        if (findAttribute(n, "pads")) throw OnnxError(where + ": both auto_pad " + autoPad->s() + " and pads");
        fixups.same_pad = autoPad->s() == "SAME_UPPER" ? NodeFixups::SamePad::Upper : NodeFixups::SamePad::Lower;
    }
    const std::vector<int64_t> kernel = intsAttribute(n, "kernel_shape", 2, 0, where);
    const std::vector<int64_t> strides = intsAttribute(n, "strides", 2, 1, where);
    std::vector<int64_t> pads = intsAttribute(n, "pads", 4, 0, where);  // top, left, bottom, right
    if (autoPad && autoPad->s() == "VALID") pads.assign(4, 0);
    const std::vector<int64_t> dilations = intsAttribute(n, "dilations", 2, 1, where);
    node.kernel = kernel[0];
    node.kernel_w = kernel[1];
    node.stride = strides[0];
    node.stride_w = strides[1];
    node.pad = pads[0];
    node.pad_left = pads[1];
    node.pad_bottom = pads[2];
    node.pad_right = pads[3];
    node.dilation = dilations[0];
    node.dilation_w = dilations[1];
    if (node.kind != graph::OpKind::Conv && (node.dilation != 1 || node.dilation_w != 1))
        throw OnnxError(where + ": dilations other than 1 are not supported for pooling");
    if (node.kernel <= 0 && node.kind != graph::OpKind::Conv) throw OnnxError(where + ": no kernel_shape");
    // What equals the height's (or the top's) is left as "the same": a square window reads back as the
    // engine's own nodes are.
    if (node.kernel_w == node.kernel) node.kernel_w = 0;
    if (node.stride_w == node.stride) node.stride_w = 0;
    if (node.pad_left == node.pad) node.pad_left = -1;
    if (node.pad_bottom == node.pad) node.pad_bottom = -1;
    if (node.pad_right == node.pad) node.pad_right = -1;
    if (node.dilation_w == node.dilation) node.dilation_w = 0;
}

}  // namespace

std::string supportedOpList() {
    return "Add, AveragePool, BatchNormalization, Cast, Clip, Concat, Constant (a tensor), Conv (any group), "
           "Div, Dropout (inference: none), Erf, Flatten (axis 1), Gather, Gemm (transA 0, alpha and beta 1), "
           "GlobalAveragePool, Identity, LayerNormalization (last axis), MatMul, MaxPool, Mul, Pad (zeros), Relu, Reshape, "
           "Shape, Sigmoid, Slice (of shapes), Softmax (last axis), Squeeze, Sub, Tanh, Transpose (batch first), Unsqueeze";
}

graph::Initializer importInitializer(const ::onnx::TensorProto& t, const std::string& origin, bool* stripped) {
    const std::string where = origin + ": initializer '" + t.name() + "'";
    const bool boolean = t.data_type() == ::onnx::TensorProto::BOOL;  // a Dropout's training_mode: held as 0 and 1
    if (t.data_type() != ::onnx::TensorProto::FLOAT && !boolean)
        throw OnnxError(where + ": data type " + std::to_string(t.data_type()) + " is not supported (only FLOAT, 1, and BOOL, 9)");
    if (t.data_location() == ::onnx::TensorProto::EXTERNAL) throw OnnxError(where + ": external data is not supported");
    graph::Initializer init;
    // A tensor stripped to its shape allocates nothing: its dims are bounded only against overflow (a
    // GPT-3-sized token embedding has 629 million elements).
    const bool noData = !t.has_raw_data() && t.float_data_size() == 0 && t.int32_data_size() == 0;
    const int64_t cap = stripped && noData ? kMaxStrippedElements : kMaxInitializerElements;
    int64_t count = 1;
    for (int64_t d : t.dims()) {
        if (d < 0 || (d > 0 && count > cap / d))
            throw OnnxError(where + ": dims exceed " + std::to_string(cap) + " elements");
        count *= d;
        init.dims.push_back(d);
    }
    const auto n = static_cast<size_t>(count);
    if (n > 0 && !t.has_raw_data() && t.float_data_size() == 0 && t.int32_data_size() == 0) {
        if (!stripped)
            throw OnnxError(where + ": " + std::to_string(count) +
                            " elements but no data (a model stripped to shapes: only estimate takes it)");
        *stripped = true;
        return init;
    }
    if (boolean) {
        if (t.has_raw_data() ? t.raw_data().size() != n : static_cast<size_t>(t.int32_data_size()) != n)
            throw OnnxError(where + ": " + std::to_string(count) + " booleans, the tensor holds another number");
        for (size_t i = 0; i < n; ++i) init.values.push_back(t.has_raw_data() ? float(t.raw_data()[i] != 0) : float(t.int32_data(static_cast<int>(i)) != 0));
        return init;
    }
    if (t.has_raw_data()) {
        if (t.raw_data().size() != n * sizeof(float))
            throw OnnxError(where + ": " + std::to_string(count) + " elements need " + std::to_string(n * sizeof(float)) +
                            " bytes, raw_data has " + std::to_string(t.raw_data().size()));
        init.values.resize(n);
        std::memcpy(init.values.data(), t.raw_data().data(), n * sizeof(float));
    } else {
        if (static_cast<size_t>(t.float_data_size()) != n)
            throw OnnxError(where + ": " + std::to_string(count) + " elements, float_data has " +
                            std::to_string(t.float_data_size()));
        init.values.assign(t.float_data().begin(), t.float_data().end());
    }
    return init;
}

graph::Node importNode(const ::onnx::NodeProto& n, int64_t opset, const std::string& origin, NodeFixups& fixups) {
    const std::string where = nodeWhere(n, origin);
    const std::optional<graph::OpKind> kind = n.domain().empty() || n.domain() == "ai.onnx"
                                                  ? graph::parseOpKind(n.op_type())
                                                  : std::nullopt;
    if (!kind)
        throw OnnxError(where + ": op type '" + n.op_type() + "'" + (n.domain().empty() ? "" : " of domain '" + n.domain() + "'") +
                        " at opset " + std::to_string(opset) + " is not supported; supported: " + supportedOpList());
    if (n.output_size() != 1) throw OnnxError(where + ": " + std::to_string(n.output_size()) + " outputs (only 1 is supported)");
    graph::Node node;
    node.name = n.name();
    node.kind = *kind;
    node.inputs.assign(n.input().begin(), n.input().end());
    node.output = n.output(0);
    switch (node.kind) {
        case graph::OpKind::Conv:
            requireNone(n, {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"}, where);
            node.group = intAttribute(n, "group", 1, where);
            if (node.group < 1) throw OnnxError(where + ": group " + std::to_string(node.group) + " is not positive");
            windowAttributes(n, node, fixups, where);
            break;
        case graph::OpKind::MaxPool:
            requireNone(n, {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "storage_order", "auto_pad"}, where);
            fixups.ceil_mode = ceilMode(n, where);
            requireInt(n, "storage_order", 0, where);
            windowAttributes(n, node, fixups, where);
            break;
        case graph::OpKind::Gemm: {
            requireNone(n, {"transA", "transB", "alpha", "beta"}, where);
            requireInt(n, "transA", 0, where);
            const int64_t transB = intAttribute(n, "transB", 0, where);
            if (transB != 0 && transB != 1)
                throw OnnxError(where + ": attribute 'transB' = " + std::to_string(transB) + " is not 0 or 1");
            fixups.transpose_weight = transB == 0;
            for (const char* scale : {"alpha", "beta"}) {
                const ::onnx::AttributeProto* a = findAttribute(n, scale);
                if (a && a->f() != 1.0f) throw OnnxError(where + ": attribute '" + scale + "' other than 1 is not supported");
            }
            break;
        }
        case graph::OpKind::BatchNormalization: {
            requireNone(n, {"epsilon", "momentum", "training_mode", "spatial"}, where);
            requireInt(n, "training_mode", 0, where);
            requireInt(n, "spatial", 1, where);
            if (const ::onnx::AttributeProto* e = findAttribute(n, "epsilon")) node.epsilon = e->f();
            if (const ::onnx::AttributeProto* m = findAttribute(n, "momentum")) node.momentum = m->f();
            break;
        }
        case graph::OpKind::Clip: {
            // No bounds: no clipping on that side.
            node.clip_min = std::numeric_limits<float>::lowest();
            node.clip_max = std::numeric_limits<float>::max();
            if (opset < 11) {
                requireNone(n, {"min", "max"}, where);
                if (const ::onnx::AttributeProto* a = findAttribute(n, "min")) node.clip_min = a->f();
                if (const ::onnx::AttributeProto* a = findAttribute(n, "max")) node.clip_max = a->f();
            } else {
                requireNone(n, {}, where);
            }
            break;
        }
        case graph::OpKind::Flatten:
            requireNone(n, {"axis"}, where);
            requireInt(n, "axis", 1, where);
            break;
        case graph::OpKind::AveragePool: {
            requireNone(n, {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "count_include_pad", "auto_pad"}, where);
            fixups.ceil_mode = ceilMode(n, where);
            const int64_t include = intAttribute(n, "count_include_pad", 0, where);
            if (include != 0 && include != 1)
                throw OnnxError(where + ": attribute 'count_include_pad' = " + std::to_string(include) + " is not 0 or 1");
            node.count_include_pad = include == 1;
            windowAttributes(n, node, fixups, where);
            break;
        }
        case graph::OpKind::Softmax:
            // Over the last axis (opset 13's default is -1, before it 1: the last of a [batch, features] value).
            requireNone(n, {"axis"}, where);
            fixups.last_axis = intAttribute(n, "axis", opset >= 13 ? -1 : 1, where);
            break;
        case graph::OpKind::LayerNormalization: {
            requireNone(n, {"axis", "epsilon", "stash_type"}, where);
            fixups.last_axis = intAttribute(n, "axis", -1, where);
            if (const ::onnx::AttributeProto* e = findAttribute(n, "epsilon")) node.epsilon = e->f();
            break;
        }
        case graph::OpKind::Transpose: {
            requireNone(n, {"perm"}, where);
            const ::onnx::AttributeProto* perm = findAttribute(n, "perm");
            if (!perm || perm->type() != ::onnx::AttributeProto::INTS)
                throw OnnxError(where + ": no 'perm' (the default reverses the axes, moving the batch's)");
            node.ints.assign(perm->ints().begin(), perm->ints().end());
            break;
        }
        default: requireNone(n, {}, where); break;
    }
    return node;
}

}  // namespace trainbench::engine::onnx
