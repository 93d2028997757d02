#include "engine/onnx/onnximport.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "engine/graph/graphpasses.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxformat.h"
#include "engine/onnx/onnxmodel.h"
#include "engine/onnx/onnxnodes.h"
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

// Per-example dims of a [batch, ...] float value; the batch dimension may be symbolic or a number.
graph::Dims perExampleShape(const ::onnx::ValueInfoProto& v, const std::string& what) {
    if (!v.type().has_tensor_type() || v.type().tensor_type().elem_type() != ::onnx::TensorProto::FLOAT)
        throw OnnxError(what + " '" + v.name() + "' is not a float tensor");
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

graph::Graph importOnnx(std::string_view bytes, const std::string& origin) {
    const ::onnx::ModelProto m = parseModel(bytes, origin);
    // A quantized model's QDQ pairs are not ops of the fp32 IR: say what the file is.
    for (const ::onnx::NodeProto& n : m.graph().node())
        if ((n.domain().empty() || n.domain() == "ai.onnx") && (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear"))
            throw OnnxError(origin + ": node '" + n.name() + "' (" + n.op_type() + "): a quantized (QDQ) model; this reads "
                            "fp32 models (a trainbench int8 model is read with readQuantizedOnnx, docs/onnx.md)");
    return importModel(m, origin);
}

graph::Graph importModel(const ::onnx::ModelProto& m, const std::string& origin) {
    const int64_t opset = defaultOpset(m, origin);
    const ::onnx::GraphProto& gp = m.graph();

    graph::Graph g;
    for (const ::onnx::TensorProto& t : gp.initializer()) {
        if (g.initializers.count(t.name())) throw OnnxError(origin + ": initializer '" + t.name() + "' appears twice");
        g.initializers.emplace(t.name(), importInitializer(t, origin));
    }
    // Older exporters list the initializers among the inputs too; the graph's input is the rest.
    for (const ::onnx::ValueInfoProto& v : gp.input()) {
        if (g.initializers.count(v.name())) continue;
        if (!g.input.empty()) throw OnnxError(origin + ": more than one graph input ('" + g.input + "', '" + v.name() + "')");
        g.input = v.name();
        g.sample_shape = perExampleShape(v, origin + ": input");
    }
    if (g.input.empty()) throw OnnxError(origin + ": the graph has no input");
    if (gp.output_size() != 1) throw OnnxError(origin + ": " + std::to_string(gp.output_size()) + " graph outputs (only 1 is supported)");
    g.output = gp.output(0).name();
    std::set<std::string> names;
    for (const ::onnx::NodeProto& n : gp.node()) {
        graph::Node node = importNode(n, opset, origin);
        if (node.name.empty()) node.name = node.output;  // ONNX names are optional; ours must be unique
        if (!names.insert(node.name).second) throw OnnxError(origin + ": node name '" + node.name + "' appears twice");
        if (node.kind == graph::OpKind::Conv && node.kernel == 0 && node.inputs.size() > 1) {
            const auto w = g.initializers.find(node.inputs[1]);
            if (w != g.initializers.end() && w->second.dims.size() == 4) node.kernel = w->second.dims[2];
        }
        g.nodes.push_back(std::move(node));
    }
    readMetadata(m, g.metadata, origin);
    undoExportAdditions(g);
    try {
        const std::map<std::string, graph::Dims> shapes = g.valueShapes();
        const auto out = shapes.find(g.output);
        if (out == shapes.end() || out->second.size() != 1)
            throw graph::GraphError("the output '" + g.output + "' is not a [batch, classes] value of the graph");
        g.classes = out->second[0];
        g.validate();
    } catch (const graph::GraphError& e) {
        throw OnnxError(origin + ": " + e.what());
    }
    return g;
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

graph::Graph readOnnx(const std::string& path) {
    graph::Graph g = importOnnx(readModelBytes(path), path);
    if (g.metadata.source_run.empty()) g.metadata.source_run = "ONNX file " + path;
    return g;
}

}  // namespace trainbench::engine::onnx
