#include "engine/onnx/onnximport.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <limits>
#include <optional>
#include <set>

#include "engine/graph/graphpasses.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxformat.h"
#include "engine/onnx/onnxmodel.h"
#include "engine/onnx/onnxnodes.h"
#include "engine/onnx/onnxshapes.h"
#include "engine/graph/nodeshape.h"
#include "engine/onnx/onnxtext.h"

namespace trainbench::engine::onnx {

namespace {

int64_t defaultOpset(const ::onnx::ModelProto& m, const std::string& origin) {
    int64_t opset = -1;
    for (const ::onnx::OperatorSetIdProto& o : m.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    if (opset < kMinImportOpset || opset > kMaxImportOpset)
        throw OnnxError(origin + ": default-domain opset " + (opset < 0 ? std::string("missing") : std::to_string(opset)) +
                        " is not supported (" + std::to_string(kMinImportOpset) + " to " + std::to_string(kMaxImportOpset) + ")");
    return opset;
}

// Per-example dims of a [batch, ...] float value (or, with `integers`, integer ids: INT64 or INT32);
// the batch dimension may be symbolic or a number.
graph::Dims perExampleShape(const ::onnx::ValueInfoProto& v, const std::string& what, bool* integers = nullptr) {
    const int type = v.type().has_tensor_type() ? v.type().tensor_type().elem_type() : 0;
    const bool ids = integers && (type == ::onnx::TensorProto::INT64 || type == ::onnx::TensorProto::INT32);
    if (integers) *integers = ids;
    if (type != ::onnx::TensorProto::FLOAT && !ids)
        throw OnnxError(what + " '" + v.name() + "' is not a float tensor" + (integers ? " (nor INT64 / INT32 ids)" : ""));
    const ::onnx::TensorShapeProto& s = v.type().tensor_type().shape();
    if (s.dim_size() < 2) throw OnnxError(what + " '" + v.name() + "' has rank " + std::to_string(s.dim_size()) + " (needs [batch, ...])");
    graph::Dims dims;
    int64_t count = 1;
    for (int i = 1; i < s.dim_size(); ++i) {
        if (!s.dim(i).has_dim_value() || s.dim(i).dim_value() <= 0)
            throw OnnxError(what + " '" + v.name() + "': dimension " + std::to_string(i) + " is not a positive number");
        dims.push_back(s.dim(i).dim_value());
        if (s.dim(i).dim_value() > kMaxInitializerElements || (count *= s.dim(i).dim_value()) > kMaxInitializerElements)
            throw OnnxError(what + " '" + v.name() + "': over " + std::to_string(kMaxInitializerElements) + " values per example");
    }
    return dims;
}

void readMetadata(const ::onnx::ModelProto& m, graph::GraphMetadata& meta, const std::string& origin) {
    if (!m.producer_name().empty()) meta.producer = m.producer_name();
    for (const ::onnx::StringStringEntryProto& e : m.metadata_props()) {
        const std::string where = origin + ": metadata '" + e.key() + "'";
        if (e.key() == kKeyInputScale) meta.input_scale = parseFloatText(e.value(), where);
        else if (e.key() == kKeyInputShift) meta.input_shift = parseFloatText(e.value(), where);
        else if (e.key() == kKeyClassNames) meta.class_names = parseClassNames(e.value(), where);
        else if (e.key() == kKeySourceRun) meta.source_run = e.value();
    }
}

bool isInteger(const ::onnx::TensorProto& t) {
    return t.data_type() == ::onnx::TensorProto::INT64 || t.data_type() == ::onnx::TensorProto::INT32;
}

// Integers a Pad's pads or a Clip's bounds may be: up to 64 values within 2^24, which floats hold exactly.
std::optional<graph::Initializer> integersAsFloats(const IntTensor& t) {
    if (t.values.size() > 64) return std::nullopt;
    graph::Initializer init;
    if (!t.scalar) init.dims = {static_cast<int64_t>(t.values.size())};
    for (int64_t v : t.values) {
        if (v > (int64_t{1} << 24) || v < -(int64_t{1} << 24)) return std::nullopt;
        init.values.push_back(static_cast<float>(v));
    }
    return init;
}

// A Constant node's `value` (a float tensor) or `value_float`, as an initializer; nullopt for an
// integer tensor (a shape, indices: the ShapeFolder takes it).
std::optional<graph::Initializer> constantTensor(const ::onnx::NodeProto& n, const std::string& where) {
    if (n.output_size() != 1 || n.attribute_size() != 1) throw OnnxError(where + ": a Constant needs one output and one attribute");
    const ::onnx::AttributeProto& a = n.attribute(0);
    if (a.name() == "value" && a.type() == ::onnx::AttributeProto::TENSOR) {
        if (isInteger(a.t())) return std::nullopt;  // read with readIntTensor, for the ShapeFolder
        return importInitializer(a.t(), where);
    }
    if (a.name() == "value_float" && a.type() == ::onnx::AttributeProto::FLOAT) return graph::Initializer{{}, {a.f()}};
    throw OnnxError(where + ": attribute '" + a.name() + "' is not supported (only a float 'value' or 'value_float')");
}

// A Pad of an image with zeros: top, left, bottom and right, none on the batch and channels (what a
// convolution's or an average pooling's padding is).
struct PendingPad {
    std::string source;
    int64_t top = 0, left = 0, bottom = 0, right = 0;
    std::string where;  // "node 'Pad_7' (Pad)", for the errors of its readers
    bool none() const { return top == 0 && left == 0 && bottom == 0 && right == 0; }
};

template <typename Resolve>
PendingPad readPad(const graph::Graph& g, const ::onnx::NodeProto& n, int64_t opset, const std::string& where,
                   const Resolve& resolve) {
    if (n.input_size() < 1 || n.output_size() != 1) throw OnnxError(where + ": needs an input and one output");
    std::vector<float> pads;
    float value = 0.0f;
    for (const ::onnx::AttributeProto& a : n.attribute()) {
        if (a.name() == "mode") {
            if (a.s() != "constant") throw OnnxError(where + ": mode '" + a.s() + "' is not supported (only constant)");
        } else if (a.name() == "pads" && opset < 11) {
            pads.assign(a.ints().begin(), a.ints().end());
        } else if (a.name() == "value" && opset < 11) {
            value = a.f();
        } else {
            throw OnnxError(where + ": attribute '" + a.name() + "' is not supported");
        }
    }
    const auto constant = [&](int i, const char* what) -> const graph::Initializer* {
        if (n.input_size() <= i || n.input(i).empty()) return nullptr;
        const auto it = g.initializers.find(resolve(n.input(i)));
        if (it == g.initializers.end())
            throw OnnxError(where + ": its " + what + " '" + n.input(i) +
                            "' is not a constant of at most 64 integers within 2^24 (computed pads are not supported)");
        return &it->second;
    };
    if (opset >= 11) {
        if (n.input_size() > 3) throw OnnxError(where + ": axes are not supported");
        if (const graph::Initializer* p = constant(1, "pads")) pads = p->values;
        if (const graph::Initializer* v = constant(2, "constant_value")) {
            if (v->values.size() != 1) throw OnnxError(where + ": its constant_value is not one value");
            value = v->values[0];
        }
    }
    if (value != 0.0f) throw OnnxError(where + ": pads with " + std::to_string(value) + " (only zeros are supported)");
    const bool none = std::all_of(pads.begin(), pads.end(), [](float v) { return v == 0.0f; });
    const bool image = pads.size() == 8 && pads[0] == 0 && pads[1] == 0 && pads[4] == 0 && pads[5] == 0 &&
                       std::all_of(pads.begin(), pads.end(), [](float v) { return v >= 0.0f; });
    if (!image && !none)
        throw OnnxError(where + ": pads other than zeros around the height and width of an image are not supported");
    PendingPad p;
    p.source = resolve(n.input(0));
    p.where = "node '" + n.name() + "' (Pad)";
    if (!none) {
        p.top = static_cast<int64_t>(pads[2]);
        p.left = static_cast<int64_t>(pads[3]);
        p.bottom = static_cast<int64_t>(pads[6]);
        p.right = static_cast<int64_t>(pads[7]);
    }
    return p;
}

// A Clip of opset 11 on reads its bounds as inputs 1 and 2 (either may be "": none): they must be
// one-value initializers, and become the node's clip_min and clip_max.
void readClipBounds(const graph::Graph& g, graph::Node& clip, const std::string& where) {
    if (clip.inputs.size() > 3) throw OnnxError(where + ": " + std::to_string(clip.inputs.size()) + " inputs (x, min, max at most)");
    for (size_t i = 1; i < clip.inputs.size(); ++i) {
        if (clip.inputs[i].empty()) continue;
        const auto it = g.initializers.find(clip.inputs[i]);
        if (it == g.initializers.end() || it->second.values.size() != 1)
            throw OnnxError(where + ": its " + (i == 1 ? "min" : "max") + " '" + clip.inputs[i] +
                            "' is not a constant of one value (bounds computed at run time are not supported)");
        (i == 1 ? clip.clip_min : clip.clip_max) = it->second.values[0];
    }
    clip.inputs.resize(1);
}

// The weight of a Gemm with transB = 0, [in, out], as the IR's [out, in]: transposed in place when
// only this node reads it (`readers`: how many nodes of the file read it), else into a copy of its own.
void transposeGemmWeight(graph::Graph& g, graph::Node& gemm, int readers, const std::string& origin) {
    const std::string where = origin + ": node '" + gemm.name + "' (Gemm)";
    const auto it = g.initializers.find(gemm.inputs[1]);
    if (it == g.initializers.end() || it->second.dims.size() != 2)
        throw OnnxError(where + ": with transB 0 its B '" + gemm.inputs[1] + "' must be a 2-D initializer");
    const graph::Initializer& w = it->second;
    const int64_t rows = w.dims[0], cols = w.dims[1];
    graph::Initializer t{{cols, rows}, std::vector<float>(w.values.size())};
    if (!w.values.empty())  // a weight stripped to its shape has only dims to swap
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c)
                t.values[static_cast<size_t>(c * rows + r)] = w.values[static_cast<size_t>(r * cols + c)];
    if (readers == 1) {
        it->second = std::move(t);
        return;
    }
    std::string name = gemm.inputs[1] + "/transposed";
    while (g.initializers.count(name)) name += "_";
    g.initializers.emplace(name, std::move(t));
    gemm.inputs[1] = name;
}

// How many nodes read each name, through Identity and Dropout (which pass their input on).
std::map<std::string, int> readerCounts(const ::onnx::GraphProto& gp) {
    std::map<std::string, std::string> alias;
    const auto resolve = [&](std::string name) {
        for (int hops = 0; hops < gp.node_size(); ++hops) {  // bounded: a cycle of aliases ends the walk
            const auto it = alias.find(name);
            if (it == alias.end()) break;
            name = it->second;
        }
        return name;
    };
    std::map<std::string, int> reads;
    for (const ::onnx::NodeProto& n : gp.node()) {
        if ((n.op_type() == "Identity" || n.op_type() == "Dropout") && n.input_size() > 0 && n.output_size() > 0) {
            alias[n.output(0)] = n.input(0);
            continue;
        }
        for (const std::string& in : n.input()) ++reads[resolve(in)];
    }
    return reads;
}

// Undoes what exportOnnx() adds: a Gemm's "<gemm>/gemm_flatten" Flatten and "<node>/fused_relu"
// Relus, each only when it reads exactly what the export made it read.
void undoExportAdditions(graph::Graph& g) {
    for (size_t i = 0; i + 1 < g.nodes.size();) {
        graph::Node& flat = g.nodes[i];
        graph::Node& gemm = g.nodes[i + 1];
        if (flat.kind == graph::OpKind::Flatten && gemm.kind == graph::OpKind::Gemm && flat.name == gemmFlattenNode(gemm.name) &&
            flat.output == gemmFlatValue(gemm.name) && flat.inputs.size() == 1 && !gemm.inputs.empty() &&
            gemm.inputs[0] == flat.output && graph::useCount(g, flat.output) == 1) {
            gemm.inputs[0] = flat.inputs[0];
            g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
    for (size_t i = 1; i < g.nodes.size();) {
        graph::Node& producer = g.nodes[i - 1];
        const graph::Node& relu = g.nodes[i];
        if (relu.kind == graph::OpKind::Relu && relu.name == fusedReluNode(producer.name) &&
            producer.output == preReluValue(producer.name) && relu.inputs.size() == 1 && relu.inputs[0] == producer.output &&
            !producer.fused_relu && producer.kind != graph::OpKind::Relu && graph::useCount(g, producer.output) == 1) {
            producer.fused_relu = true;
            producer.output = relu.output;
            g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
}

// A quantized model's QDQ pairs are not ops of the fp32 IR: say what the file is.
void refuseQuantized(const ::onnx::ModelProto& m, const std::string& origin) {
    for (const ::onnx::NodeProto& n : m.graph().node())
        if ((n.domain().empty() || n.domain() == "ai.onnx") && (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear"))
            throw OnnxError(origin + ": node '" + n.name() + "' (" + n.op_type() + "): a quantized (QDQ) model; this reads "
                            "fp32 models (a trainbench int8 model is read with readQuantizedOnnx, docs/onnx.md)");
}

// Gives a converted initializer's data back to the allocator (clear_* keeps the capacity), so that an
// import holds each weight once plus the one being converted, not the whole model twice.
void releaseData(::onnx::TensorProto& t) {
    std::string().swap(*t.mutable_raw_data());
    google::protobuf::RepeatedField<float>().Swap(t.mutable_float_data());
    google::protobuf::RepeatedField<int32_t>().Swap(t.mutable_int32_data());
}

// An open file descriptor, closed on the way out.
struct FileDescriptor {
    int fd;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

// The model in the file at `path`, parsed as it is read: only protobuf's buffer of the file is held,
// not a copy of the whole file. The same checks and messages as readModelBytes() + parseModel().
::onnx::ModelProto readModel(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw OnnxError(path + ": cannot read: " + ec.message());
    if (static_cast<int64_t>(size) > kMaxFileBytes)
        throw OnnxError(path + ": " + std::to_string(size) + " bytes, over the " + std::to_string(kMaxFileBytes) + " cap");
    const FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) throw OnnxError(path + ": cannot read its " + std::to_string(size) + " bytes");
    google::protobuf::io::FileInputStream input(file.fd, 1 << 20);
    google::protobuf::io::LimitingInputStream limited(&input, static_cast<int64_t>(size));  // what file_size said, as before
    ::onnx::ModelProto m;
    const bool parsed = m.ParseFromZeroCopyStream(&limited);
    if (input.GetErrno() != 0 || (parsed && limited.ByteCount() != static_cast<int64_t>(size)))
        throw OnnxError(path + ": cannot read its " + std::to_string(size) + " bytes");
    if (!parsed)
        throw OnnxError(path + ": not an ONNX model: its " + std::to_string(size) +
                        " bytes do not parse as a ModelProto (truncated or corrupt)");
    if (!m.has_graph()) throw OnnxError(path + ": the model has no graph");
    return m;
}

// auto_pad SAME_UPPER / SAME_LOWER: each axis padded so that ceil(size / stride) windows fit, the
// odd cell at the end (UPPER, TensorFlow's SAME) or the start (LOWER).
void samePads(graph::Node& node, NodeFixups::SamePad mode, const std::map<std::string, graph::Dims>& shapes,
              const std::string& where) {
    const auto x = shapes.find(node.inputs.empty() ? std::string() : node.inputs[0]);
    if (x == shapes.end() || x->second.size() != 3)
        throw OnnxError(where + ": auto_pad SAME needs a [channels, height, width] input before it");
    const auto pads = [&](int64_t size, int64_t kernel, int64_t stride, int64_t dilation) -> std::pair<int64_t, int64_t> {
        if (kernel <= 0 || stride <= 0 || dilation <= 0) throw OnnxError(where + ": kernel, stride and dilation must be positive");
        const int64_t out = (size + stride - 1) / stride;
        const int64_t total = std::max<int64_t>(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size);
        const int64_t small = total / 2;
        return mode == NodeFixups::SamePad::Upper ? std::pair{small, total - small} : std::pair{total - small, small};
    };
    const auto [top, bottom] = pads(x->second[1], node.kernel, node.stride, node.dilation);
    const auto [left, right] = pads(x->second[2], node.kernelW(), node.strideW(), node.dilationW());
    node.pad = top;
    node.pad_left = left == top ? -1 : left;
    node.pad_bottom = bottom == top ? -1 : bottom;
    node.pad_right = right == top ? -1 : right;
}

// ceil_mode 1: ceil((size + pads - kernel) / stride) + 1 windows, less one when the last would start
// in the end's padding (ONNX's and PyTorch's rule); the cells past the input and its pads become more
// padding at the bottom and right. A max never takes them; an average must not count them, which is
// count_include_pad 0 — or 1 with no pads of its own, where only these cells are padding (PyTorch's
// divisor then counts the cells inside the input, as 0 does).
void ceilPads(graph::Node& node, const std::map<std::string, graph::Dims>& shapes, const std::string& where) {
    const auto x = shapes.find(node.inputs.empty() ? std::string() : node.inputs[0]);
    if (x == shapes.end() || x->second.size() != 3) throw OnnxError(where + ": ceil_mode needs a [channels, height, width] input before it");
    const auto extra = [&](int64_t size, int64_t kernel, int64_t stride, int64_t before, int64_t after) -> int64_t {
        if (kernel <= 0 || stride <= 0 || size + before + after < kernel) return 0;  // the shape check says what is wrong
        int64_t out = (size + before + after - kernel + stride - 1) / stride + 1;
        if ((out - 1) * stride >= size + before) --out;
        return std::max<int64_t>(0, (out - 1) * stride + kernel - (size + before + after));
    };
    const int64_t bottom = extra(x->second[1], node.kernel, node.stride, node.pad, node.padBottom());
    const int64_t right = extra(x->second[2], node.kernelW(), node.strideW(), node.padLeft(), node.padRight());
    if (bottom == 0 && right == 0) return;
    if (node.kind == graph::OpKind::AveragePool && node.count_include_pad) {
        if (node.pad != 0 || node.padLeft() != 0 || node.padBottom() != 0 || node.padRight() != 0)
            throw OnnxError(where + ": ceil_mode 1 with count_include_pad 1 and pads of its own is not supported");
        node.count_include_pad = false;
    }
    const int64_t left = node.padLeft(), newBottom = node.padBottom() + bottom, newRight = node.padRight() + right;
    node.pad_left = left == node.pad ? -1 : left;
    node.pad_bottom = newBottom == node.pad ? -1 : newBottom;
    node.pad_right = newRight == node.pad ? -1 : newRight;
}

// A Gather, Reshape, Unsqueeze, Squeeze or Concat of values (after the ShapeFolder found it is not
// shape arithmetic): an embedding lookup, slices at constant indices, a reshape to a shape known here,
// a join along an axis.
graph::Node valueShapeNode(const ::onnx::NodeProto& n, int64_t opset, const std::string& where, const ShapeFolder& folder,
                           const std::map<std::string, graph::Dims>& shapes, const graph::Graph& g,
                           const ShapeFolder::Resolve& resolve) {
    if (n.output_size() != 1) throw OnnxError(where + ": " + std::to_string(n.output_size()) + " outputs (only 1 is supported)");
    const std::string& op = n.op_type();
    graph::Node node;
    node.name = n.name();
    node.output = n.output(0);
    const auto valueShape = [&](int i) -> const graph::Dims& {
        if (n.input_size() <= i || n.input(i).empty()) throw OnnxError(where + ": has no input " + std::to_string(i));
        const auto it = shapes.find(resolve(n.input(i)));
        if (it == shapes.end())
            throw OnnxError(where + ": input " + std::to_string(i) + " '" + n.input(i) +
                            "' is not a value defined before it (an unknown name, or a constant where a value belongs)");
        return it->second;
    };
    int64_t axis = op == "Concat" ? std::numeric_limits<int64_t>::min() : 0;
    bool allowZero = false;
    for (const ::onnx::AttributeProto& a : n.attribute()) {
        if (a.name() == "axis" && (op == "Gather" || op == "Concat")) axis = a.i();
        else if (a.name() == "allowzero" && op == "Reshape") allowZero = a.i() != 0;
        else if (!(a.name() == "axes" && opset < 13 && (op == "Unsqueeze" || op == "Squeeze")))
            throw OnnxError(where + ": attribute '" + a.name() + "' is not supported");
    }
    if (op == "Gather") {
        if (n.input_size() != 2) throw OnnxError(where + ": takes data and indices, has " + std::to_string(n.input_size()) + " inputs");
        node.kind = graph::OpKind::Gather;
        if (g.initializers.count(resolve(n.input(0)))) {
            // An embedding: the IR reads the ids first, the table second.
            if (axis != 0) throw OnnxError(where + ": gathers a table along axis " + std::to_string(axis) + " (only its rows, 0)");
            valueShape(1);
            node.inputs = {n.input(1), n.input(0)};
            return node;
        }
        const auto rank = static_cast<int64_t>(valueShape(0).size()) + 1;
        if (axis < 0) axis += rank;
        if (axis <= 0 || axis >= rank)
            throw OnnxError(where + ": gathers along axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) +
                            " value (examples are not gathered: the batch's axis 0 is not supported)");
        const IntTensor& idx = folder.intInput(n, 1, "indices", where);
        node.inputs = {n.input(0)};
        node.axis = axis;
        node.ints = idx.values;
        node.scalar_index = idx.scalar;
        return node;
    }
    node.inputs = {n.input_size() > 0 ? n.input(0) : std::string()};
    if (op == "Reshape") {
        if (n.input_size() != 2) throw OnnxError(where + ": takes data and a shape, has " + std::to_string(n.input_size()) + " inputs");
        const graph::Dims& x = valueShape(0);
        const IntTensor& shape = folder.intInput(n, 1, "shape", where);
        if (allowZero && std::find(shape.values.begin(), shape.values.end(), 0) != shape.values.end())
            throw OnnxError(where + ": allowzero with a 0 in its shape (an empty tensor) is not supported");
        node.kind = graph::OpKind::Reshape;
        node.ints = folder.reshapeTarget(resolve(n.input(1)), x, where);
        return node;
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
        node.kind = graph::OpKind::Reshape;
        node.ints = folder.unsqueezed(n, valueShape(0), op == "Squeeze", where);
        return node;
    }
    // Concat of values.
    const auto rank = static_cast<int64_t>(valueShape(0).size()) + 1;
    if (axis == std::numeric_limits<int64_t>::min()) throw OnnxError(where + ": has no axis");
    if (axis < 0) axis += rank;
    if (axis <= 0 || axis >= rank)
        throw OnnxError(where + ": joins along axis " + std::to_string(axis) + " of rank-" + std::to_string(rank) +
                        " values (examples are not joined: the batch's axis 0 is not supported)");
    node.kind = graph::OpKind::Concat;
    node.axis = axis;
    node.inputs.clear();
    for (int i = 0; i < n.input_size(); ++i) {
        valueShape(i);
        node.inputs.push_back(n.input(i));
    }
    return node;
}

}  // namespace

::onnx::ModelProto parseModel(std::string_view bytes, const std::string& origin) {
    if (static_cast<int64_t>(bytes.size()) > kMaxFileBytes)
        throw OnnxError(origin + ": " + std::to_string(bytes.size()) + " bytes, over the " + std::to_string(kMaxFileBytes) + " cap");
    ::onnx::ModelProto m;
    if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        throw OnnxError(origin + ": not an ONNX model: its " + std::to_string(bytes.size()) +
                        " bytes do not parse as a ModelProto (truncated or corrupt)");
    if (!m.has_graph()) throw OnnxError(origin + ": the model has no graph");
    return m;
}

graph::Graph importOnnx(std::string_view bytes, const std::string& origin, const ImportOptions& options) {
    ::onnx::ModelProto m = parseModel(bytes, origin);
    refuseQuantized(m, origin);
    return importModel(std::move(m), origin, options.shapes_only);
}

namespace {

// importModel's work; with `owned` (the same model, to be dropped) each initializer's data is
// released as soon as it is converted.
graph::Graph importModelReleasing(const ::onnx::ModelProto& m, ::onnx::ModelProto* owned, const std::string& origin,
                                  bool shapesOnly) {
    const int64_t opset = defaultOpset(m, origin);
    const ::onnx::GraphProto& gp = m.graph();

    graph::Graph g;
    std::map<std::string, IntTensor> integerInitializers;  // shapes and indices, for the ShapeFolder
    for (int i = 0; i < gp.initializer_size(); ++i) {
        const ::onnx::TensorProto& t = gp.initializer(i);
        if (g.initializers.count(t.name()) || integerInitializers.count(t.name()))
            throw OnnxError(origin + ": initializer '" + t.name() + "' appears twice");
        if (isInteger(t)) {
            IntTensor ints = readIntTensor(t, origin + ": initializer '" + t.name() + "'");
            if (std::optional<graph::Initializer> f = integersAsFloats(ints)) g.initializers.emplace(t.name(), std::move(*f));
            integerInitializers.emplace(t.name(), std::move(ints));
            continue;
        }
        bool stripped = false;
        g.initializers.emplace(t.name(), importInitializer(t, origin, shapesOnly ? &stripped : nullptr));
        g.weightless = g.weightless || stripped;
        if (owned) releaseData(*owned->mutable_graph()->mutable_initializer(i));
    }
    // Older exporters list the initializers among the inputs too; the graph's input is the rest.
    for (const ::onnx::ValueInfoProto& v : gp.input()) {
        if (g.initializers.count(v.name()) || integerInitializers.count(v.name())) continue;
        if (!g.input.empty()) throw OnnxError(origin + ": more than one graph input ('" + g.input + "', '" + v.name() + "')");
        g.input = v.name();
        g.sample_shape = perExampleShape(v, origin + ": input", &g.integer_input);
    }
    if (g.input.empty()) throw OnnxError(origin + ": the graph has no input");
    if (gp.output_size() != 1) throw OnnxError(origin + ": " + std::to_string(gp.output_size()) + " graph outputs (only 1 is supported)");
    g.output = gp.output(0).name();
    std::set<std::string> names;
    // Identity and inference Dropout pass their input on: their readers read it instead.
    std::map<std::string, std::string> alias;
    const auto resolve = [&](std::string name) {
        for (auto it = alias.find(name); it != alias.end(); it = alias.find(name)) name = it->second;
        return name;
    };
    // Every value's per-example shape as the nodes are read (what Shape reads and a Reshape keeps).
    std::map<std::string, graph::Dims> shapes{{g.input, g.sample_shape}};
    ShapeFolder folder(g, shapes, opset, resolve);
    for (auto& [name, ints] : integerInitializers) folder.add(name, std::move(ints));
    const std::map<std::string, int> readers = readerCounts(gp);
    std::set<std::string> dropoutMasks;
    std::map<std::string, PendingPad> padded;  // a Pad's output, by what it pads
    const auto isValue = [&](const std::string& name) { return shapes.count(resolve(name)) > 0; };
    for (const ::onnx::NodeProto& n : gp.node()) {
        const std::string where = origin + ": node '" + n.name() + "' (" + n.op_type() + ")";
        const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
        const std::string& op = n.op_type();
        if (standard && op == "Constant") {
            std::optional<graph::Initializer> value = constantTensor(n, where);
            if (g.initializers.count(n.output(0)) || folder.find(n.output(0)) || shapes.count(n.output(0)))
                throw OnnxError(where + ": its output '" + n.output(0) + "' is already defined");
            if (!value) {
                IntTensor ints = readIntTensor(n.attribute(0).t(), where);
                value = integersAsFloats(ints);
                folder.add(n.output(0), std::move(ints));
            }
            if (value) g.initializers.emplace(n.output(0), std::move(*value));
            continue;
        }
        if (standard && (op == "Identity" || op == "Dropout")) {
            if (n.input_size() < 1 || n.output_size() < 1) throw OnnxError(where + ": no input or no output");
            if (op == "Dropout") {
                if (n.input_size() > 2 && !n.input(2).empty()) {
                    const auto mode = g.initializers.find(resolve(n.input(2)));
                    if (mode == g.initializers.end() || mode->second.values.size() != 1 || mode->second.values[0] != 0.0f)
                        throw OnnxError(where + ": training_mode is not a constant false; only inference Dropout is supported");
                }
                if (n.output_size() > 1 && !n.output(1).empty()) dropoutMasks.insert(n.output(1));
            }
            const std::string source = resolve(n.input(0));
            if (source == n.output(0) || alias.count(n.output(0)))
                throw OnnxError(where + ": its output '" + n.output(0) + "' is its own input or written twice");
            alias[n.output(0)] = source;
            continue;
        }
        if (standard && op == "Pad") {
            const PendingPad pad = readPad(g, n, opset, where, resolve);
            if (pad.none()) {
                if (alias.count(n.output(0))) throw OnnxError(where + ": its output '" + n.output(0) + "' is written twice");
                alias[n.output(0)] = pad.source;  // pads of 0: the identity
            } else {
                padded[n.output(0)] = pad;
            }
            continue;
        }
        // Shape arithmetic: computed here, once.
        if (standard && n.output_size() >= 1 && (shapes.count(n.output(0)) || folder.find(n.output(0))))
            throw OnnxError(where + ": its output '" + n.output(0) + "' is already defined");
        if (standard && folder.fold(n, where)) continue;
        if (standard && op == "Cast" && n.input_size() == 1 && isValue(n.input(0))) {
            for (const ::onnx::AttributeProto& a : n.attribute())
                if (a.name() == "to" && a.i() != ::onnx::TensorProto::FLOAT)
                    throw OnnxError(where + ": casts a value to type " + std::to_string(a.i()) + " (float values only)");
            alias[n.output(0)] = resolve(n.input(0));  // float to float
            continue;
        }
        // A Gather of a table's rows at constant indices is a constant (a position embedding's rows).
        if (standard && op == "Gather" && n.input_size() == 2 && g.initializers.count(resolve(n.input(0))) &&
            folder.find(n.input(1))) {
            for (const ::onnx::AttributeProto& a : n.attribute())
                if (a.name() != "axis" || a.i() != 0) throw OnnxError(where + ": gathers a constant along an axis other than 0");
            const graph::Initializer& table = g.initializers.at(resolve(n.input(0)));
            const IntTensor& idx = *folder.find(n.input(1));
            if (table.dims.empty()) throw OnnxError(where + ": gathers from a scalar");
            graph::Initializer rows;
            if (!idx.scalar) rows.dims.push_back(static_cast<int64_t>(idx.values.size()));
            rows.dims.insert(rows.dims.end(), table.dims.begin() + 1, table.dims.end());
            const int64_t count = table.dims[0];
            int64_t per = 1;
            for (size_t d = 1; d < table.dims.size(); ++d) per *= table.dims[d];
            for (int64_t i : idx.values) {
                if (i < -count || i >= count)
                    throw OnnxError(where + ": index " + std::to_string(i) + " is outside the table's " + std::to_string(count) + " rows");
                if (table.values.empty()) continue;  // stripped to shapes
                const int64_t row = i < 0 ? i + count : i;
                rows.values.insert(rows.values.end(), table.values.begin() + row * per, table.values.begin() + (row + 1) * per);
            }
            if (rows.values.empty() && !table.values.empty()) throw OnnxError(where + ": gathers no rows");
            g.initializers.emplace(n.output(0), std::move(rows));
            continue;
        }
        graph::Node node;
        NodeFixups fixups;
        if (standard && (op == "Gather" || op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" || op == "Concat")) {
            node = valueShapeNode(n, opset, where, folder, shapes, g, resolve);
        } else {
            node = importNode(n, opset, origin, fixups);
        }
        for (std::string& in : node.inputs) {
            in = resolve(in);
            if (dropoutMasks.count(in)) throw OnnxError(where + ": reads Dropout's mask '" + in + "', which inference has not");
        }
        // A bias or a scale first, the value second (PyTorch writes Linear's bias so): the value first.
        if ((node.kind == graph::OpKind::Add || node.kind == graph::OpKind::Mul) && node.inputs.size() == 2 &&
            !shapes.count(node.inputs[0]) && g.initializers.count(node.inputs[0]) && shapes.count(node.inputs[1]))
            std::swap(node.inputs[0], node.inputs[1]);
        // Zeros around the image, then a convolution: more of its own zero padding (ZeroPad2d before a
        // Conv2d). Then an average over the kernel: the AveragePool's padding, counted in the divisor
        // (PyTorch exports AvgPool2d(count_include_pad=True) so).
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            const auto p = padded.find(node.inputs[i]);
            if (p == padded.end()) continue;
            const bool conv = node.kind == graph::OpKind::Conv;
            const bool pool = node.kind == graph::OpKind::AveragePool && node.pad == 0 && node.padLeft() == 0 &&
                              node.padBottom() == 0 && node.padRight() == 0;
            if (i != 0 || !(conv || pool))
                throw OnnxError(where + ": reads '" + node.inputs[i] + "', padded by " + p->second.where +
                                "; a Pad is supported as the identity (pads of 0), right before a Conv, or right before "
                                "an AveragePool without pads of its own");
            const PendingPad& pad = p->second;
            node.inputs[0] = pad.source;
            const int64_t left = node.padLeft() + pad.left, bottom = node.padBottom() + pad.bottom,
                          right = node.padRight() + pad.right;
            node.pad += pad.top;
            node.pad_left = left == node.pad ? -1 : left;
            node.pad_bottom = bottom == node.pad ? -1 : bottom;
            node.pad_right = right == node.pad ? -1 : right;
            if (pool) node.count_include_pad = true;
        }
        if (node.name.empty()) node.name = node.output;  // ONNX names are optional; ours must be unique
        if (!names.insert(node.name).second) throw OnnxError(origin + ": node name '" + node.name + "' appears twice");
        if (node.kind == graph::OpKind::Conv && node.kernel == 0 && node.inputs.size() > 1) {
            const auto w = g.initializers.find(node.inputs[1]);
            if (w != g.initializers.end() && w->second.dims.size() == 4) {
                node.kernel = w->second.dims[2];
                node.kernel_w = w->second.dims[3] == node.kernel ? 0 : w->second.dims[3];
            }
        }
        if (node.kind == graph::OpKind::Clip) readClipBounds(g, node, where);
        if (fixups.transpose_weight && node.inputs.size() > 1) {
            const auto r = readers.find(node.inputs[1]);
            transposeGemmWeight(g, node, r == readers.end() ? 1 : r->second, origin);
        }
        if (fixups.same_pad != NodeFixups::SamePad::None) samePads(node, fixups.same_pad, shapes, where);
        if (fixups.ceil_mode) ceilPads(node, shapes, where);
        const std::string nodeWhere = "node '" + node.name + "' (" + graph::opKindName(node.kind) + ")";
        if (fixups.last_axis) {
            // Softmax and LayerNormalization: over the last axis of the whole tensor only.
            const auto in = shapes.find(node.inputs.empty() ? std::string() : node.inputs[0]);
            const int64_t rank = in == shapes.end() ? 0 : static_cast<int64_t>(in->second.size()) + 1;
            if (in != shapes.end() && *fixups.last_axis != -1 && *fixups.last_axis != rank - 1)
                throw OnnxError(where + ": axis " + std::to_string(*fixups.last_axis) + " of a rank-" + std::to_string(rank) +
                                " value is not supported (only the last axis, -1)");
        }
        try {
            shapes[node.output] = graph::nodeOutputShape(g, node, shapes, nodeWhere);
        } catch (const graph::GraphError& e) {
            throw OnnxError(origin + ": " + e.what());
        }
        g.nodes.push_back(std::move(node));
    }
    g.output = resolve(g.output);
    if (const auto p = padded.find(g.output); p != padded.end())
        throw OnnxError(origin + ": the graph's output is padded by " + p->second.where + " (a Pad is supported before a Conv or an AveragePool only)");
    readMetadata(m, g.metadata, origin);
    undoExportAdditions(g);
    graph::pruneInitializers(g);  // a Clip's bounds, a Dropout's ratio, what no node reads
    try {
        const std::map<std::string, graph::Dims> final = g.valueShapes();
        const auto out = final.find(g.output);
        if (out == final.end() || out->second.size() != 1)
            throw graph::GraphError("the output '" + g.output + "' is not a [batch, classes] value of the graph");
        g.classes = out->second[0];
        g.validate();
    } catch (const graph::GraphError& e) {
        throw OnnxError(origin + ": " + e.what());
    }
    return g;
}

}  // namespace

graph::Graph importModel(const ::onnx::ModelProto& m, const std::string& origin, bool shapesOnly) {
    return importModelReleasing(m, nullptr, origin, shapesOnly);
}

graph::Graph importModel(::onnx::ModelProto&& m, const std::string& origin, bool shapesOnly) {
    return importModelReleasing(m, &m, origin, shapesOnly);
}

std::string readModelBytes(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw OnnxError(path + ": cannot read: " + ec.message());
    if (static_cast<int64_t>(size) > kMaxFileBytes)
        throw OnnxError(path + ": " + std::to_string(size) + " bytes, over the " + std::to_string(kMaxFileBytes) + " cap");
    std::ifstream in(path, std::ios::binary);
    std::string bytes(size, '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
        throw OnnxError(path + ": cannot read its " + std::to_string(size) + " bytes");
    return bytes;
}

graph::Graph readOnnx(const std::string& path, const ImportOptions& options) {
    ::onnx::ModelProto m = readModel(path);
    refuseQuantized(m, path);
    graph::Graph g = importModel(std::move(m), path, options.shapes_only);
    if (g.metadata.source_run.empty()) g.metadata.source_run = "ONNX file " + path;
    return g;
}

}  // namespace trainbench::engine::onnx
