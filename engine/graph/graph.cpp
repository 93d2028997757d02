#include "engine/graph/graph.h"

#include <functional>
#include <numeric>
#include <set>

#include "engine/graph/nodeshape.h"
#include "engine/model/layerstack.h"

namespace trainbench::engine::graph {

namespace {
constexpr OpKind kKinds[] = {OpKind::Conv,    OpKind::Gemm,    OpKind::BatchNormalization, OpKind::Relu,
                             OpKind::MaxPool, OpKind::GlobalAveragePool, OpKind::Flatten, OpKind::Add,
                             OpKind::Clip,    OpKind::Sigmoid, OpKind::Tanh,               OpKind::AveragePool,
                             OpKind::Softmax, OpKind::Mul,     OpKind::Sub,                OpKind::Div,
                             OpKind::MatMul,  OpKind::Gather,  OpKind::LayerNormalization, OpKind::Reshape,
                             OpKind::Transpose, OpKind::Erf,   OpKind::Concat};
}  // namespace

const char* opKindName(OpKind kind) {
    switch (kind) {
        case OpKind::Conv: return "Conv";
        case OpKind::Gemm: return "Gemm";
        case OpKind::BatchNormalization: return "BatchNormalization";
        case OpKind::Relu: return "Relu";
        case OpKind::MaxPool: return "MaxPool";
        case OpKind::GlobalAveragePool: return "GlobalAveragePool";
        case OpKind::Flatten: return "Flatten";
        case OpKind::Add: return "Add";
        case OpKind::Clip: return "Clip";
        case OpKind::Sigmoid: return "Sigmoid";
        case OpKind::Tanh: return "Tanh";
        case OpKind::AveragePool: return "AveragePool";
        case OpKind::Softmax: return "Softmax";
        case OpKind::Mul: return "Mul";
        case OpKind::Sub: return "Sub";
        case OpKind::Div: return "Div";
        case OpKind::MatMul: return "MatMul";
        case OpKind::Gather: return "Gather";
        case OpKind::LayerNormalization: return "LayerNormalization";
        case OpKind::Reshape: return "Reshape";
        case OpKind::Transpose: return "Transpose";
        case OpKind::Erf: return "Erf";
        case OpKind::Concat: return "Concat";
    }
    return "?";
}

std::optional<OpKind> parseOpKind(std::string_view onnxOpType) {
    for (OpKind k : kKinds)
        if (onnxOpType == opKindName(k)) return k;
    return std::nullopt;
}

std::string Node::windowText() const {
    std::string t = std::to_string(kernel) + "x" + std::to_string(kernelW()) + " kernel, stride " + std::to_string(stride) +
                    "x" + std::to_string(strideW()) + ", pads " + std::to_string(pad) + "," + std::to_string(padLeft()) + "," +
                    std::to_string(padBottom()) + "," + std::to_string(padRight()) + " (top, left, bottom, right)";
    if (dilation != 1 || dilationW() != 1) t += ", dilation " + std::to_string(dilation) + "x" + std::to_string(dilationW());
    return t;
}

const Initializer& Graph::initializer(const std::string& name, const std::string& node) const {
    const auto it = initializers.find(name);
    if (it == initializers.end()) throw GraphError("node '" + node + "': no initializer '" + name + "'");
    return it->second;
}

std::map<std::string, Dims> Graph::valueShapes() const {
    if (sample_shape.empty()) throw GraphError("the graph's input '" + input + "' has no sample shape");
    for (const auto& [name, init] : initializers) {
        const int64_t n = std::accumulate(init.dims.begin(), init.dims.end(), int64_t{1}, std::multiplies<>());
        if (n != static_cast<int64_t>(init.values.size()) && !(weightless && init.values.empty()))
            throw GraphError("initializer '" + name + "' has dims " + dimsText(init.dims) + " (" + std::to_string(n) +
                             " values) but holds " + std::to_string(init.values.size()));
    }
    std::map<std::string, Dims> shapes{{input, sample_shape}};
    std::set<std::string> names;
    for (const Node& node : nodes) {
        const std::string where = "node '" + node.name + "' (" + opKindName(node.kind) + ")";
        if (node.name.empty()) throw GraphError("a " + std::string(opKindName(node.kind)) + " node has no name");
        if (!names.insert(node.name).second) throw GraphError(where + ": a node of that name comes earlier");
        if (shapes.count(node.output) || initializers.count(node.output))
            throw GraphError(where + ": its output '" + node.output + "' is already defined");
        shapes.emplace(node.output, nodeOutputShape(*this, node, shapes, where));
    }
    return shapes;
}

void Graph::validate() const {
    const std::map<std::string, Dims> shapes = valueShapes();
    const auto it = shapes.find(output);
    if (it == shapes.end()) throw GraphError("the graph's output '" + output + "' is not written by any node");
    if (it->second != Dims{classes})
        throw GraphError("the graph's output '" + output + "' has shape " + dimsText(it->second) + ", expected " +
                         std::to_string(classes) + " classes");
    if (!metadata.class_names.empty() && static_cast<int64_t>(metadata.class_names.size()) != classes)
        throw GraphError("the metadata names " + std::to_string(metadata.class_names.size()) + " classes, the graph has " +
                         std::to_string(classes));
}

int64_t Graph::parameterCount() const {
    int64_t n = 0;
    for (const auto& [name, init] : initializers)
        n += std::accumulate(init.dims.begin(), init.dims.end(), int64_t{1}, std::multiplies<>());
    return n;
}

}  // namespace trainbench::engine::graph
