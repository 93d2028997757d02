// The ONNX importer on files trainbench did not write: a graph of the IR's ops from another
// exporter (initializers among the inputs, float_data, a numeric batch dimension, Relu nodes of its
// own) imports and keeps its Relus apart; anything the IR cannot hold is refused naming the node,
// op type and opset and the supported list; damaged files and tensors name the file and what failed,
// before anything is allocated for them. Built with libonnx's protobuf classes (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <fstream>

#include <functional>
#include <onnx/onnx_pb.h>

#include "engine/graph/referenceevaluator.h"
#include "engine/inference/compiledgraph.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxexport.h"
#include "engine/onnx/onnximport.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

// x [N, 4] -> Gemm (W [3, 4], B [3], transB) -> Relu -> y [N, 3], written as PyTorch's exporter
// writes it: initializers also listed as inputs, float_data, batch dimension 1.
::onnx::ModelProto foreignModel() {
    ::onnx::ModelProto m;
    m.set_ir_version(7);
    m.add_opset_import()->set_version(11);
    ::onnx::GraphProto* g = m.mutable_graph();
    auto value = [](::onnx::ValueInfoProto* v, const char* name, std::initializer_list<int64_t> dims) {
        v->set_name(name);
        v->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
        for (int64_t d : dims) v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    };
    value(g->add_input(), "x", {1, 4});
    value(g->add_input(), "fc.weight", {3, 4});
    value(g->add_input(), "fc.bias", {3});
    value(g->add_output(), "y", {1, 3});
    auto tensor = [&](const char* name, std::initializer_list<int64_t> dims, int count, float start) {
        ::onnx::TensorProto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        for (int64_t d : dims) t->add_dims(d);
        for (int i = 0; i < count; ++i) t->add_float_data(start + 0.25f * static_cast<float>(i));
    };
    tensor("fc.weight", {3, 4}, 12, -1.5f);
    tensor("fc.bias", {3}, 3, 0.5f);
    ::onnx::NodeProto* gemm = g->add_node();
    gemm->set_name("Gemm_0");
    gemm->set_op_type("Gemm");
    gemm->add_input("x");
    gemm->add_input("fc.weight");
    gemm->add_input("fc.bias");
    gemm->add_output("h");
    ::onnx::AttributeProto* a = gemm->add_attribute();
    a->set_name("transB");
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(1);
    ::onnx::NodeProto* relu = g->add_node();
    relu->set_name("Relu_1");
    relu->set_op_type("Relu");
    relu->add_input("h");
    relu->add_output("y");
    return m;
}

std::string bytesOf(const ::onnx::ModelProto& m) { return m.SerializeAsString(); }

std::string importError(const std::string& bytes) {
    try {
        onnx::importOnnx(bytes, "model.onnx");
    } catch (const onnx::OnnxError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected an OnnxError";
    return {};
}

TEST(OnnxImport, AGraphOfTheIrsOpsFromAnotherExporterImportsWithItsReluApart) {
    const graph::Graph g = onnx::importOnnx(bytesOf(foreignModel()), "model.onnx");
    EXPECT_EQ(g.input, "x");
    EXPECT_EQ(g.sample_shape, graph::Dims{4});
    EXPECT_EQ(g.classes, 3);
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_FALSE(g.nodes[0].fused_relu);
    EXPECT_EQ(g.nodes[1].kind, graph::OpKind::Relu);
    EXPECT_EQ(g.metadata.input_scale, 1.0f);
    // relu(W x + b) for x = (1, 2, 3, 4): row r of W is -1.5 + 0.25 (4r + k).
    const std::vector<float> x{1, 2, 3, 4};
    const std::vector<float> y = graph::evaluateReference(g, x.data(), 1);
    for (int r = 0; r < 3; ++r) {
        float want = 0.5f + 0.25f * static_cast<float>(r);
        for (int k = 0; k < 4; ++k) want += (-1.5f + 0.25f * static_cast<float>(4 * r + k)) * x[static_cast<size_t>(k)];
        EXPECT_FLOAT_EQ(y[static_cast<size_t>(r)], std::max(want, 0.0f)) << r;
    }
}

// ONNX's Gemm reads B as [in, out] unless transB = 1 (its default is 0): the same weights stored
// transposed under transB 0 give the same predictions, and an Identity and an inference Dropout (its
// mask unread, training_mode a constant false) between the Gemm and the Relu are passed through.
TEST(OnnxImport, GemmWithTransBZeroIdentityAndInferenceDropoutImportAsTheSameGraph) {
    const std::vector<float> x{1, -2, 3, 0.5f, 2, 2, -1, 0};
    const graph::Graph plain = onnx::importOnnx(bytesOf(foreignModel()), "model.onnx");
    const std::vector<float> want = graph::evaluateReference(plain, x.data(), 2);

    ::onnx::ModelProto m = foreignModel();
    ::onnx::GraphProto* g = m.mutable_graph();
    g->mutable_node(0)->clear_attribute();  // transB absent: 0
    ::onnx::TensorProto* w = g->mutable_initializer(0);
    std::vector<float> rows(w->float_data().begin(), w->float_data().end());  // [3, 4]
    w->clear_float_data();
    w->clear_dims();
    w->add_dims(4);
    w->add_dims(3);
    for (int in = 0; in < 4; ++in)
        for (int out = 0; out < 3; ++out) w->add_float_data(rows[static_cast<size_t>(out * 4 + in)]);
    g->mutable_node(0)->set_output(0, "h0");
    ::onnx::NodeProto relu = g->node(1);
    g->mutable_node()->RemoveLast();
    ::onnx::NodeProto* identity = g->add_node();
    identity->set_name("Identity_5");
    identity->set_op_type("Identity");
    identity->add_input("h0");
    identity->add_output("h1");
    ::onnx::TensorProto* mode = g->add_initializer();
    mode->set_name("training_mode");
    mode->set_data_type(::onnx::TensorProto::BOOL);
    mode->add_int32_data(0);
    ::onnx::NodeProto* dropout = g->add_node();
    dropout->set_name("Dropout_6");
    dropout->set_op_type("Dropout");
    dropout->add_input("h1");
    dropout->add_input("");
    dropout->add_input("training_mode");
    dropout->add_output("h");
    dropout->add_output("mask");
    *g->add_node() = relu;

    const graph::Graph imported = onnx::importOnnx(bytesOf(m), "model.onnx");
    ASSERT_EQ(imported.nodes.size(), 2u);
    EXPECT_EQ(imported.nodes[1].inputs, std::vector<std::string>{"h0"});
    EXPECT_EQ(imported.initializers.at("fc.weight").dims, (graph::Dims{3, 4}));
    EXPECT_EQ(imported.initializers.count("training_mode"), 0u) << "read by no node: not a parameter";
    EXPECT_EQ(graph::evaluateReference(imported, x.data(), 2), want);

    // Training-mode Dropout and a read mask are refused, naming the node.
    mode->set_int32_data(0, 1);
    EXPECT_NE(importError(bytesOf(m)).find("node 'Dropout_6' (Dropout): training_mode is not a constant false"),
              std::string::npos);
    mode->set_int32_data(0, 0);
    g->mutable_node(g->node_size() - 1)->set_input(0, "mask");
    EXPECT_NE(importError(bytesOf(m)).find("reads Dropout's mask 'mask'"), std::string::npos);
    // An Identity that reads what it writes (a cycle) is refused, not followed forever.
    g->mutable_node(g->node_size() - 1)->set_input(0, "h");
    identity->set_input(0, "h1");
    EXPECT_NE(importError(bytesOf(m)).find("node 'Identity_5' (Identity): its output 'h1' is its own input"),
              std::string::npos);
}

// A Clip's bounds must be constants: one computed by a node is refused naming the Clip.
TEST(OnnxImport, AClipWhoseBoundIsNotAConstantIsRefusedNamingIt) {
    ::onnx::ModelProto m = foreignModel();
    ::onnx::NodeProto* relu = m.mutable_graph()->mutable_node(1);
    relu->set_op_type("Clip");
    relu->add_input("x");  // min = the graph's input: not a constant
    const std::string e = importError(bytesOf(m));
    EXPECT_NE(e.find("node 'Relu_1' (Clip): its min 'x' is not a constant of one value"), std::string::npos) << e;
}

// Hostile bounds and constants: a Clip whose min is above its max (opset 10 attributes) and a
// Constant of a kind the importer does not take are refused naming the node.
TEST(OnnxImport, AnInvertedClipAndAnUnsupportedConstantAreRefusedNamingTheNode) {
    ::onnx::ModelProto m = foreignModel();
    m.mutable_opset_import(0)->set_version(10);
    ::onnx::NodeProto* clip = m.mutable_graph()->mutable_node(1);
    clip->set_op_type("Clip");
    for (const auto& [name, value] : {std::pair{"min", 6.0f}, std::pair{"max", 0.0f}}) {
        ::onnx::AttributeProto* a = clip->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::FLOAT);
        a->set_f(value);
    }
    std::string e = importError(bytesOf(m));
    EXPECT_NE(e.find("node 'Relu_1' (Clip): min 6.000000 is above max 0.000000"), std::string::npos) << e;

    m = foreignModel();
    ::onnx::NodeProto* constant = m.mutable_graph()->add_node();
    constant->set_name("Constant_9");
    constant->set_op_type("Constant");
    constant->add_output("c");
    ::onnx::AttributeProto* a = constant->add_attribute();
    a->set_name("value_string");
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s("x\n\"");
    e = importError(bytesOf(m));
    EXPECT_NE(e.find("node 'Constant_9' (Constant): attribute 'value_string' is not supported"), std::string::npos) << e;
}

// auto_pad SAME_UPPER and SAME_LOWER (TensorFlow's exports): the pads ONNX defines — ceil(6 / 2) = 3
// windows of 3 need one cell more, at the end (UPPER) or the start (LOWER) — computed from the
// input's size at import; the graph then runs as with those pads written out.
TEST(OnnxImport, AutoPadSameIsComputedFromTheInputsSize) {
    const auto model = [](const char* autoPad, std::vector<int64_t> pads) {
        ::onnx::ModelProto m;
        m.set_ir_version(7);
        m.add_opset_import()->set_version(11);
        ::onnx::GraphProto* g = m.mutable_graph();
        ::onnx::ValueInfoProto* in = g->add_input();
        in->set_name("x");
        in->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
        for (int64_t d : {1, 1, 6, 6}) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
        g->add_output()->set_name("y");
        ::onnx::TensorProto* w = g->add_initializer();
        w->set_name("w");
        w->set_data_type(::onnx::TensorProto::FLOAT);
        for (int64_t d : {1, 1, 3, 3}) w->add_dims(d);
        for (int i = 0; i < 9; ++i) w->add_float_data(0.1f * static_cast<float>(i + 1));
        ::onnx::NodeProto* conv = g->add_node();
        conv->set_name("conv");
        conv->set_op_type("Conv");
        conv->add_input("x");
        conv->add_input("w");
        conv->add_output("c");
        ::onnx::AttributeProto* strides = conv->add_attribute();
        strides->set_name("strides");
        strides->set_type(::onnx::AttributeProto::INTS);
        strides->add_ints(2);
        strides->add_ints(2);
        ::onnx::AttributeProto* a = conv->add_attribute();
        if (autoPad) {
            a->set_name("auto_pad");
            a->set_type(::onnx::AttributeProto::STRING);
            a->set_s(autoPad);
        } else {
            a->set_name("pads");
            a->set_type(::onnx::AttributeProto::INTS);
            for (int64_t p : pads) a->add_ints(p);
        }
        ::onnx::NodeProto* flat = g->add_node();
        flat->set_name("flat");
        flat->set_op_type("Flatten");
        flat->add_input("c");
        flat->add_output("y");
        return bytesOf(m);
    };
    const graph::Graph upper = onnx::importOnnx(model("SAME_UPPER", {}), "upper.onnx");
    const graph::Graph lower = onnx::importOnnx(model("SAME_LOWER", {}), "lower.onnx");
    EXPECT_EQ(upper.nodes[0].windowText(), "3x3 kernel, stride 2x2, pads 0,0,1,1 (top, left, bottom, right)");
    EXPECT_EQ(lower.nodes[0].windowText(), "3x3 kernel, stride 2x2, pads 1,1,0,0 (top, left, bottom, right)");
    EXPECT_EQ(upper.classes, 9);
    std::vector<float> x(36);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
    EXPECT_EQ(graph::evaluateReference(upper, x.data(), 1),
              graph::evaluateReference(onnx::importOnnx(model(nullptr, {0, 0, 1, 1}), "explicit.onnx"), x.data(), 1));
    EXPECT_NE(graph::evaluateReference(upper, x.data(), 1), graph::evaluateReference(lower, x.data(), 1));
    EXPECT_NE(importError(model("SAME_MIDDLE", {})).find("node 'conv' (Conv): auto_pad 'SAME_MIDDLE' is not supported"),
              std::string::npos);
}

// ceil_mode 1 on an average that counts its own pads: PyTorch and ONNX runtimes disagree on the
// cells past the end, so it is refused naming the node (the ceil_pools fixture covers the rest).
TEST(OnnxImport, CeilModeWithAnAverageCountingItsOwnPadsIsRefused) {
    std::ifstream in(std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/ceil_pools.onnx", std::ios::binary);
    ::onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromIstream(&in));
    for (::onnx::NodeProto& n : *m.mutable_graph()->mutable_node()) {
        if (n.op_type() != "AveragePool") continue;
        for (::onnx::AttributeProto& a : *n.mutable_attribute())
            if (a.name() == "pads")
                for (int i = 0; i < a.ints_size(); ++i) a.set_ints(i, 1);
        ::onnx::AttributeProto* include = n.add_attribute();
        include->set_name("count_include_pad");
        include->set_type(::onnx::AttributeProto::INT);
        include->set_i(1);
    }
    const std::string e = importError(bytesOf(m));
    EXPECT_NE(e.find("(AveragePool): ceil_mode 1 with count_include_pad 1 and pads of its own is not supported"), std::string::npos) << e;
}

// Shape arithmetic on hostile integers: a product past 64 bits is an error naming the node, not
// undefined behaviour; computing with the batch is refused saying so.
TEST(OnnxImport, ShapeArithmeticThatOverflowsOrComputesWithTheBatchIsRefused) {
    const auto withArithmetic = [](const char* op, const std::function<void(::onnx::GraphProto&)>& operands) {
        ::onnx::ModelProto m = foreignModel();
        ::onnx::GraphProto& g = *m.mutable_graph();
        operands(g);
        ::onnx::NodeProto* n = g.add_node();
        n->set_name("arith");
        n->set_op_type(op);
        n->add_input("a");
        n->add_input("b");
        n->add_output("c");
        return importError(bytesOf(m));
    };
    const auto constant = [](::onnx::GraphProto& g, const char* name, int64_t value) {
        ::onnx::NodeProto* c = g.add_node();
        c->set_name(std::string(name) + "_const");
        c->set_op_type("Constant");
        c->add_output(name);
        ::onnx::AttributeProto* a = c->add_attribute();
        a->set_name("value");
        a->set_type(::onnx::AttributeProto::TENSOR);
        a->mutable_t()->set_data_type(::onnx::TensorProto::INT64);
        a->mutable_t()->add_dims(1);
        a->mutable_t()->add_int64_data(value);
    };
    std::string e = withArithmetic("Mul", [&](::onnx::GraphProto& g) {
        constant(g, "a", int64_t{1} << 40);
        constant(g, "b", int64_t{1} << 40);
    });
    EXPECT_NE(e.find("node 'arith' (Mul): 1099511627776 Mul 1099511627776 overflows 64 bits"), std::string::npos) << e;
    e = withArithmetic("Mul", [&](::onnx::GraphProto& g) {
        ::onnx::NodeProto* shape = g.add_node();
        shape->set_name("shape_of_x");
        shape->set_op_type("Shape");
        shape->add_input("x");
        shape->add_output("a");
        constant(g, "b", 2);
    });
    EXPECT_NE(e.find("node 'arith' (Mul): computes with the batch dimension ([N, 4], [2])"), std::string::npos) << e;
}

TEST(OnnxImport, AnOpOutsideTheIrIsRefusedNamingNodeOpOpsetAndTheSupportedList) {
    ::onnx::ModelProto m = foreignModel();
    m.mutable_graph()->mutable_node(1)->set_op_type("InstanceNormalization");
    const std::string e = importError(bytesOf(m));
    EXPECT_NE(e.find("model.onnx"), std::string::npos) << e;
    EXPECT_NE(e.find("node 'Relu_1' (InstanceNormalization)"), std::string::npos) << e;
    EXPECT_NE(e.find("opset 11"), std::string::npos) << e;
    EXPECT_NE(e.find("supported: Add, AveragePool, BatchNormalization, Cast, Clip, Concat, Constant"), std::string::npos) << e;
    EXPECT_NE(e.find("LayerNormalization (last axis), MatMul"), std::string::npos) << e;
}

TEST(OnnxImport, AttributesTheIrCannotHoldAreRefusedNamingTheNode) {
    ::onnx::ModelProto m = foreignModel();
    m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_i(2);  // transB = 2
    EXPECT_NE(importError(bytesOf(m)).find("node 'Gemm_0' (Gemm): attribute 'transB' = 2 is not 0 or 1"), std::string::npos);
    m = foreignModel();
    m.mutable_opset_import(0)->set_version(21);
    EXPECT_NE(importError(bytesOf(m)).find("opset 21 is not supported"), std::string::npos);
}

TEST(OnnxImport, TensorsWhoseDataDoesNotFitTheirDimsAreRefusedBeforeAllocating) {
    ::onnx::ModelProto m = foreignModel();
    ::onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_float_data();
    w->set_raw_data(std::string(40, '\0'));
    EXPECT_NE(importError(bytesOf(m)).find("initializer 'fc.weight': 12 elements need 48 bytes, raw_data has 40"),
              std::string::npos);
    // 2^62 elements claimed by a few bytes: refused by the element cap, not by a failed allocation.
    w->clear_dims();
    w->add_dims(int64_t{1} << 31);
    w->add_dims(int64_t{1} << 31);
    EXPECT_NE(importError(bytesOf(m)).find("initializer 'fc.weight': dims exceed"), std::string::npos);
}

// The names an export gives its added Flatten, on a Gemm without inputs: refused, not read past
// the Gemm's (empty) input list.
TEST(OnnxImport, AnExportsFlattenNameBeforeAGemmWithoutInputsIsRefused) {
    ::onnx::ModelProto m = foreignModel();
    ::onnx::GraphProto* g = m.mutable_graph();
    g->mutable_node(0)->clear_input();
    g->mutable_node(0)->set_name("g");
    ::onnx::NodeProto* flat = g->add_node();
    flat->set_name("g/gemm_flatten");
    flat->set_op_type("Flatten");
    flat->add_input("x");
    flat->add_output("g/gemm_flat");
    g->mutable_node()->SwapElements(0, 2);  // Flatten, Relu, Gemm -> the Flatten first ...
    g->mutable_node()->SwapElements(1, 2);  // ... then the Gemm, then the Relu
    EXPECT_NE(importError(bytesOf(m)).find("model.onnx: "), std::string::npos);
}

TEST(OnnxImport, ATruncatedModelNamesTheFileAndThatItDoesNotParse) {
    const std::string bytes = bytesOf(foreignModel());
    const std::string e = importError(bytes.substr(0, bytes.size() / 2));
    EXPECT_NE(e.find("model.onnx: not an ONNX model"), std::string::npos) << e;
    EXPECT_NE(e.find("truncated or corrupt"), std::string::npos) << e;
}

class OnnxImportFile : public test::TempDirTest {};

TEST_F(OnnxImportFile, AMissingFileIsNamed) {
    try {
        onnx::readOnnx(path("absent.onnx"));
        ADD_FAILURE() << "expected an OnnxError";
    } catch (const onnx::OnnxError& e) {
        EXPECT_NE(std::string(e.what()).find(path("absent.onnx")), std::string::npos) << e.what();
    }
}

// readOnnx parses the file as it reads it and drops each tensor's data once converted: it gives the
// graph importOnnx gives for the file's bytes, from raw_data as from float_data.
TEST_F(OnnxImportFile, AFileImportsAsItsBytesDo) {
    ::onnx::ModelProto m = foreignModel();
    ::onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);  // fc.weight as raw_data, fc.bias as float_data
    const std::vector<float> values(w->float_data().begin(), w->float_data().end());
    w->clear_float_data();
    w->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    const std::string bytes = bytesOf(m);
    test::writeText(path("model.onnx"), bytes);
    const graph::Graph fromFile = onnx::readOnnx(path("model.onnx"));
    const graph::Graph fromBytes = onnx::importOnnx(bytes, "model.onnx");
    ASSERT_EQ(fromFile.initializers.size(), 2u);
    for (const auto& [name, init] : fromBytes.initializers) {
        EXPECT_EQ(fromFile.initializers.at(name).dims, init.dims) << name;
        EXPECT_EQ(fromFile.initializers.at(name).values, init.values) << name;
    }
    EXPECT_EQ(fromFile.initializers.at("fc.weight").values, values);
    EXPECT_EQ(fromFile.nodes.size(), fromBytes.nodes.size());
    EXPECT_EQ(fromFile.metadata.source_run, "ONNX file " + path("model.onnx"));
}

TEST_F(OnnxImportFile, ATruncatedFileIsNamedAsNotAModel) {
    const std::string bytes = bytesOf(foreignModel());
    test::writeText(path("half.onnx"), bytes.substr(0, bytes.size() / 2));
    const std::string e = test::errorOf<onnx::OnnxError>([&] { onnx::readOnnx(path("half.onnx")); });
    EXPECT_NE(e.find(path("half.onnx") + ": not an ONNX model: its " + std::to_string(bytes.size() / 2) + " bytes"),
              std::string::npos) << e;
    EXPECT_NE(e.find("truncated or corrupt"), std::string::npos) << e;
}

}  // namespace
}  // namespace trainbench::engine

namespace trainbench::engine {
namespace {

// A model in trainbench's export conventions written by onnx's own helpers (tests/fuzz/
// make_onnx_seeds.py): every op the importer takes; its fused ReLU is re-fused, the BN's and Add's
// ReLU-less outputs stay, the metadata is read.
TEST(OnnxImport, AModelWrittenByOnnxsHelpersImportsWithItsReluReFused) {
    const graph::Graph g = onnx::readOnnx(TRAINBENCH_TEST_DATA_DIR "/fuzz/fuzz_onnximport/small_cnn.onnx");
    ASSERT_EQ(g.nodes.size(), 7u);
    EXPECT_EQ(g.nodes[0].name, "conv_0");
    EXPECT_TRUE(g.nodes[0].fused_relu);
    EXPECT_EQ(g.nodes[0].output, "conv_0");
    EXPECT_EQ(g.nodes[0].kernel, 3);
    EXPECT_EQ(g.nodes[0].pad, 1);
    EXPECT_EQ(g.nodes[3].kind, graph::OpKind::MaxPool);
    EXPECT_EQ(g.nodes[3].stride, 2);
    EXPECT_EQ(g.sample_shape, (graph::Dims{1, 6, 6}));
    EXPECT_EQ(g.classes, 3);
    EXPECT_EQ(g.metadata.input_scale, 0.003921569f);
    EXPECT_EQ(g.metadata.class_names, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(g.metadata.source_run, "seed");
}

}  // namespace
}  // namespace trainbench::engine

namespace trainbench::engine {
namespace {

// The ops of issue 22's second set on the foreign model's [3] output: Softmax over the features
// (axis 1 or -1, nothing else), a Mul by an initializer that must broadcast, a Pad that must be the
// identity or go before an AveragePool.
TEST(OnnxImport, SoftmaxMulAndPadAreTakenOrRefusedNamingTheNode) {
    ::onnx::ModelProto m = foreignModel();
    m.mutable_graph()->mutable_node(1)->set_op_type("Softmax");
    graph::Graph g = onnx::importOnnx(bytesOf(m), "model.onnx");
    ASSERT_EQ(g.nodes[1].kind, graph::OpKind::Softmax);
    const std::vector<float> x{1, 2, 3, 4};
    const std::vector<float> y = graph::evaluateReference(g, x.data(), 1);
    EXPECT_NEAR(y[0] + y[1] + y[2], 1.0f, 1e-6f);

    ::onnx::AttributeProto* axis = m.mutable_graph()->mutable_node(1)->add_attribute();
    axis->set_name("axis");
    axis->set_type(::onnx::AttributeProto::INT);
    axis->set_i(0);
    EXPECT_NE(importError(bytesOf(m)).find("node 'Relu_1' (Softmax): axis 0 of a rank-2 value is not supported (only the last axis, -1)"),
              std::string::npos);

    // Mul by a [2] initializer: it does not broadcast against [3].
    m = foreignModel();
    m.mutable_graph()->mutable_node(1)->set_op_type("Mul");
    m.mutable_graph()->mutable_node(1)->add_input("s");
    ::onnx::TensorProto* s = m.mutable_graph()->add_initializer();
    s->set_name("s");
    s->set_data_type(::onnx::TensorProto::FLOAT);
    s->add_dims(2);
    s->add_float_data(2.0f);
    s->add_float_data(3.0f);
    std::string e = importError(bytesOf(m));
    EXPECT_NE(e.find("node 'Relu_1' (Mul): its operand 's' is 2, which does not broadcast against its 3 input"),
              std::string::npos)
        << e;
    // A scalar does, and multiplies every feature.
    s->clear_dims();
    s->clear_float_data();
    s->add_float_data(2.0f);
    g = onnx::importOnnx(bytesOf(m), "model.onnx");
    const std::vector<float> doubled = graph::evaluateReference(g, x.data(), 1);
    graph::Graph linear = onnx::importOnnx(bytesOf(foreignModel()), "m");
    linear.nodes.pop_back();  // no ReLU: W x + b
    linear.output = linear.nodes.back().output;
    const std::vector<float> once = graph::evaluateReference(linear, x.data(), 1);
    for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(doubled[i], 2.0f * once[i]) << i;
    std::vector<float> compiled(3);
    CpuDevice device(1);
    inference::CompiledGraph(g, device).run(x.data(), 1, compiled.data());
    for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(compiled[i], doubled[i]) << i;

    // A Pad of a [batch, features] value is no image's padding.
    m = foreignModel();
    ::onnx::NodeProto* relu = m.mutable_graph()->mutable_node(1);
    relu->set_op_type("Pad");
    relu->add_input("pads");
    ::onnx::TensorProto* pads = m.mutable_graph()->add_initializer();
    pads->set_name("pads");
    pads->set_data_type(::onnx::TensorProto::FLOAT);
    pads->add_dims(4);
    for (float v : {0.0f, 1.0f, 0.0f, 1.0f}) pads->add_float_data(v);
    e = importError(bytesOf(m));
    EXPECT_NE(e.find("node 'Relu_1' (Pad): pads other than zeros around the height and width of an image"),
              std::string::npos)
        << e;
}

}  // namespace
}  // namespace trainbench::engine

namespace trainbench::engine {
namespace {

// An INT64 Constant (how exporters give a Pad its pads) whose data does not match its dims, whose
// values do not fit a float exactly, or a Pad with negative pads: each refused naming the node.
TEST(OnnxImport, HostileInt64ConstantsAndNegativePadsAreRefusedNamingTheNode) {
    const auto withPad = [](const std::function<void(::onnx::TensorProto&)>& pads) {
        ::onnx::ModelProto m = foreignModel();
        ::onnx::NodeProto* constant = m.mutable_graph()->add_node();
        constant->set_name("pads_const");
        constant->set_op_type("Constant");
        constant->add_output("pads");
        ::onnx::AttributeProto* a = constant->add_attribute();
        a->set_name("value");
        a->set_type(::onnx::AttributeProto::TENSOR);
        ::onnx::TensorProto* t = a->mutable_t();
        t->set_data_type(::onnx::TensorProto::INT64);
        pads(*t);
        // The Constant goes first; a Pad reads "y" after the Relu.
        m.mutable_graph()->mutable_node()->SwapElements(0, 2);
        m.mutable_graph()->mutable_node()->SwapElements(1, 2);
        ::onnx::NodeProto* pad = m.mutable_graph()->add_node();
        pad->set_name("Pad_9");
        pad->set_op_type("Pad");
        pad->add_input("y");
        pad->add_input("pads");
        pad->add_output("z");
        m.mutable_graph()->mutable_output(0)->set_name("z");
        return importError(bytesOf(m));
    };
    std::string e = withPad([](::onnx::TensorProto& t) {
        t.add_dims(8);
        t.set_raw_data(std::string(20, '\0'));  // 8 values need 64 bytes
    });
    EXPECT_NE(e.find("node 'pads_const' (Constant): 8 integers, its data holds another number"), std::string::npos) << e;
    e = withPad([](::onnx::TensorProto& t) {
        t.add_dims(1);
        t.add_int64_data(int64_t{1} << 40);
    });
    // Held as an integer (a shape may hold any), but a Pad's pads must be small.
    EXPECT_NE(e.find("node 'Pad_9' (Pad): its pads 'pads' is not a constant of at most 64 integers within 2^24"), std::string::npos)
        << e;
    e = withPad([](::onnx::TensorProto& t) {
        t.add_dims(1000000);
    });
    EXPECT_NE(e.find("node 'pads_const' (Constant): 1000000 integers (at most 4096)"), std::string::npos) << e;
    e = withPad([](::onnx::TensorProto& t) {
        t.add_dims(8);
        for (int64_t v : {0, 0, -1, 0, 0, 0, 1, 0}) t.add_int64_data(v);
    });
    EXPECT_NE(e.find("node 'Pad_9' (Pad): pads other than zeros around the height and width of an image"), std::string::npos)
        << e;
}

}  // namespace
}  // namespace trainbench::engine
