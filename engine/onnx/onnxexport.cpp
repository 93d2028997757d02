#include "engine/onnx/onnxexport.h"

#include <onnx/onnx_pb.h>

#include <bit>

#include "engine/io/atomicfilewriter.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxformat.h"
#include "engine/onnx/onnxmodel.h"
#include "engine/onnx/onnxtext.h"

namespace trainbench::engine::onnx {

namespace {

// raw_data is little-endian by the ONNX spec; the bytes are the floats as they are in memory.
static_assert(std::endian::native == std::endian::little, "ONNX raw_data is little-endian");

void setShape(::onnx::ValueInfoProto* v, const std::string& name, const graph::Dims& perExample, bool integers = false) {
    v->set_name(name);
    ::onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(integers ? ::onnx::TensorProto::INT64 : ::onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param(kBatchDim);
    for (int64_t d : perExample) t->mutable_shape()->add_dim()->set_dim_value(d);
}

void addInts(::onnx::NodeProto* n, const char* name, std::initializer_list<int64_t> values) {
    ::onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
}

void addInt(::onnx::NodeProto* n, const char* name, int64_t value) {
    ::onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(value);
}

::onnx::NodeProto* addNode(::onnx::GraphProto* g, const std::string& name, const char* op,
                           const std::vector<std::string>& inputs, const std::string& output) {
    ::onnx::NodeProto* n = g->add_node();
    n->set_name(name);
    n->set_op_type(op);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(output);
    return n;
}

// The node's attributes as ONNX spells them.
void addAttributes(::onnx::NodeProto* n, const graph::Node& node) {
    switch (node.kind) {
        case graph::OpKind::AveragePool:
            if (node.count_include_pad) addInt(n, "count_include_pad", 1);
            [[fallthrough]];
        case graph::OpKind::Conv:
        case graph::OpKind::MaxPool:
            addInts(n, "kernel_shape", {node.kernel, node.kernelW()});
            addInts(n, "strides", {node.stride, node.strideW()});
            addInts(n, "pads", {node.pad, node.padLeft(), node.padBottom(), node.padRight()});
            if (node.dilation != 1 || node.dilationW() != 1) addInts(n, "dilations", {node.dilation, node.dilationW()});
            if (node.group != 1) addInt(n, "group", node.group);
            break;
        case graph::OpKind::Gemm: addInt(n, "transB", 1); break;
        case graph::OpKind::BatchNormalization: {
            ::onnx::AttributeProto* a = n->add_attribute();
            a->set_name("epsilon");
            a->set_type(::onnx::AttributeProto::FLOAT);
            a->set_f(node.epsilon);
            ::onnx::AttributeProto* m = n->add_attribute();
            m->set_name("momentum");
            m->set_type(::onnx::AttributeProto::FLOAT);
            m->set_f(node.momentum);
            break;
        }
        case graph::OpKind::Flatten: addInt(n, "axis", 1); break;
        case graph::OpKind::Softmax: addInt(n, "axis", -1); break;
        case graph::OpKind::Gather:
        case graph::OpKind::Concat: addInt(n, "axis", node.axis); break;
        case graph::OpKind::Transpose: {
            ::onnx::AttributeProto* a = n->add_attribute();
            a->set_name("perm");
            a->set_type(::onnx::AttributeProto::INTS);
            for (int64_t v : node.ints) a->add_ints(v);
            break;
        }
        case graph::OpKind::LayerNormalization: {
            addInt(n, "axis", -1);
            ::onnx::AttributeProto* a = n->add_attribute();
            a->set_name("epsilon");
            a->set_type(::onnx::AttributeProto::FLOAT);
            a->set_f(node.epsilon);
            break;
        }
        default: break;
    }
}

}  // namespace

void addMetadata(::onnx::ModelProto& m, const std::string& key, const std::string& value) {
    ::onnx::StringStringEntryProto* e = m.add_metadata_props();
    e->set_key(key);
    e->set_value(value);
}

::onnx::ModelProto exportModel(const graph::Graph& graph, const ExportOptions& options) {
    if (graph.weightless) throw OnnxError("the model was stripped to its shapes (no weights): there is nothing to export");
    graph.validate();
    const std::map<std::string, graph::Dims> shapes = graph.valueShapes();
    ::onnx::ModelProto m;
    m.set_ir_version(kIrVersion);
    ::onnx::OperatorSetIdProto* opset = m.add_opset_import();
    opset->set_domain("");
    // LayerNormalization is an op from opset 17 on; other graphs keep opset 13, which every runtime reads.
    bool layerNorm = false;
    for (const graph::Node& node : graph.nodes) layerNorm = layerNorm || node.kind == graph::OpKind::LayerNormalization;
    opset->set_version(layerNorm ? kLayerNormOpsetVersion : kOpsetVersion);
    m.set_producer_name(graph.metadata.producer);
    m.set_producer_version(options.producer_version);
    addMetadata(m, kKeyInputScale, floatText(graph.metadata.input_scale));
    addMetadata(m, kKeyInputShift, floatText(graph.metadata.input_shift));
    addMetadata(m, kKeyClassNames, classNamesText(graph.metadata.class_names));
    if (!graph.metadata.source_run.empty()) addMetadata(m, kKeySourceRun, graph.metadata.source_run);

    ::onnx::GraphProto* g = m.mutable_graph();
    g->set_name(options.graph_name);
    setShape(g->add_input(), graph.input, graph.sample_shape, graph.integer_input);
    setShape(g->add_output(), graph.output, {graph.classes});
    for (const auto& [name, init] : graph.initializers) {
        ::onnx::TensorProto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        for (int64_t d : init.dims) t->add_dims(d);
        t->set_raw_data(init.values.data(), init.values.size() * sizeof(float));
    }
    for (const graph::Node& node : graph.nodes) {
        std::vector<std::string> inputs = node.inputs;
        if (node.kind == graph::OpKind::Gemm && shapes.at(inputs[0]).size() > 1) {
            addInt(addNode(g, gemmFlattenNode(node.name), "Flatten", {inputs[0]}, gemmFlatValue(node.name)), "axis", 1);
            inputs[0] = gemmFlatValue(node.name);
        }
        if (node.kind == graph::OpKind::Clip) {
            // Opset 13's Clip reads its bounds as inputs: two scalar initializers of its own (under
            // a free name should the graph hold one of theirs already).
            for (const auto& [wanted, value] : {std::pair{clipMinValue(node.name), node.clip_min},
                                                std::pair{clipMaxValue(node.name), node.clip_max}}) {
                std::string bound = wanted;
                while (graph.initializers.count(bound) || shapes.count(bound)) bound += "_";
                ::onnx::TensorProto* t = g->add_initializer();
                t->set_name(bound);
                t->set_data_type(::onnx::TensorProto::FLOAT);
                t->set_raw_data(&value, sizeof(float));
                inputs.push_back(bound);
            }
        }
        // A Reshape's shape and a Gather's indices are INT64 inputs: initializers of their own. The
        // batch stays as it is (a 0 in the shape copies the input's dimension); an embedding reads
        // the table first, as ONNX orders a Gather's inputs.
        const auto intInput = [&](const std::string& wanted, const std::vector<int64_t>& values, bool scalar) {
            std::string name = wanted;
            while (graph.initializers.count(name) || shapes.count(name)) name += "_";
            ::onnx::TensorProto* t = g->add_initializer();
            t->set_name(name);
            t->set_data_type(::onnx::TensorProto::INT64);
            if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
            t->set_raw_data(values.data(), values.size() * sizeof(int64_t));
            inputs.push_back(name);
        };
        if (node.kind == graph::OpKind::Reshape) {
            std::vector<int64_t> shape{0};
            shape.insert(shape.end(), node.ints.begin(), node.ints.end());
            intInput(node.name + "/shape", shape, false);
        }
        if (node.kind == graph::OpKind::Gather && inputs.size() == 2) std::swap(inputs[0], inputs[1]);
        if (node.kind == graph::OpKind::Gather && inputs.size() == 1) intInput(node.name + "/indices", node.ints, node.scalar_index);
        const std::string out = node.fused_relu ? preReluValue(node.name) : node.output;
        addAttributes(addNode(g, node.name, graph::opKindName(node.kind), inputs, out), node);
        if (node.fused_relu) addNode(g, fusedReluNode(node.name), "Relu", {out}, node.output);
    }
    return m;
}

std::string serializeModel(const ::onnx::ModelProto& m) {
    std::string bytes;
    if (!m.SerializeToString(&bytes)) throw OnnxError("the graph's ONNX model could not be serialized (over 2 GiB?)");
    return bytes;
}

void writeModelBytes(const std::string& bytes, const std::string& path) {
    try {
        writeFileAtomically(path, bytes);
    } catch (const std::exception& e) {
        throw OnnxError("cannot write the ONNX model to " + path + ": " + e.what());
    }
}

std::string exportOnnx(const graph::Graph& graph, const ExportOptions& options) {
    return serializeModel(exportModel(graph, options));
}

void writeOnnx(const graph::Graph& graph, const std::string& path, const ExportOptions& options) {
    writeModelBytes(exportOnnx(graph, options), path);
}

}  // namespace trainbench::engine::onnx
