// The quantized model's file (engine/onnx/onnxquantized.h): W1 (mlp), W2 (cnn) and resnet_small as
// int8 written in the QDQ form and read back into the same QuantizedGraph — the same s8 codes and
// weight scales, the same activation scales and types, the same calibration and record — whose
// Int8CompiledGraph logits are bit-identical, and which writes the same bytes again. The fp32
// importer names a QDQ file for what it is; the quantized importer refuses any other QDQ pattern
// naming the node. Built with libonnx's protobuf classes (tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <functional>

#include "engine/inference/int8compiledgraph.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnximport.h"
#include "engine/onnx/onnxquantized.h"
#include "tests/engine/onnxgraphs.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

using inference::QuantizedGraph;

onnx::QuantizationRecord sampleRecord(const QuantizedGraph& q) {
    onnx::QuantizationRecord r;
    r.fp32_weight_bytes = 2143272;
    r.int8_weight_bytes = q.weightBytes();
    r.test_examples = 10000;
    r.fp32_accuracy = 0.748;
    r.int8_accuracy = 0.7479;
    r.isa = "avx512_core";
    return r;
}

std::vector<float> int8Logits(const QuantizedGraph& q, CpuDevice& dev, const std::vector<float>& x, int64_t n) {
    inference::Int8CompiledGraph c(q, dev);
    std::vector<float> logits(static_cast<size_t>(n * q.graph.classes));
    c.run(x.data(), n, logits.data());
    return logits;
}

void expectSameQuantizedGraph(const QuantizedGraph& got, const QuantizedGraph& want) {
    testonnx::expectSameGraph(got.graph, want.graph);
    ASSERT_EQ(got.weights.size(), want.weights.size());
    for (const auto& [name, w] : want.weights) {
        ASSERT_TRUE(got.weights.count(name)) << name;
        const inference::QuantizedWeight& g = got.weights.at(name);
        EXPECT_EQ(g.dims, w.dims) << name;
        EXPECT_EQ(g.values, w.values) << name;  // the s8 codes
        ASSERT_EQ(g.scales.size(), w.scales.size()) << name;
        EXPECT_EQ(std::memcmp(g.scales.data(), w.scales.data(), w.scales.size() * sizeof(float)), 0) << name;
    }
    ASSERT_EQ(got.activations.size(), want.activations.size());
    for (const auto& [value, a] : want.activations) {
        ASSERT_TRUE(got.activations.count(value)) << value;
        const inference::ActivationQuant& g = got.activations.at(value);
        EXPECT_EQ(std::memcmp(&g.scale, &a.scale, sizeof(float)), 0) << value;
        EXPECT_EQ(g.is_unsigned, a.is_unsigned) << value;
        EXPECT_EQ(g.levels, a.levels) << value;
    }
    EXPECT_EQ(got.calibration, want.calibration);
}

class OnnxQuantized : public test::TempDirTest {};

TEST_F(OnnxQuantized, ExportThenImportIsTheSameQuantizedGraphForW1W2AndResnetSmall) {
    CpuDevice dev(2);
    const std::vector<float> x = testonnx::pixels(7, 8);
    for (const char* preset : {"mlp", "cnn", "resnet_small"}) {
        SCOPED_TRACE(preset);
        const QuantizedGraph q = testonnx::quantizedGraph(preset, dev);
        const onnx::QuantizationRecord record = sampleRecord(q);
        const std::string bytes = onnx::exportQuantizedOnnx(q, record, {"test"});
        const onnx::QuantizedModel back = onnx::importQuantizedOnnx(bytes, "memory");
        expectSameQuantizedGraph(back.graph, q);
        EXPECT_EQ(back.record, record);
        const std::vector<float> want = int8Logits(q, dev, x, 7), got = int8Logits(back.graph, dev, x, 7);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0);
        EXPECT_EQ(onnx::exportQuantizedOnnx(back.graph, back.record, {"test"}), bytes);
        // int8 weights: W1's and W2's files about a quarter of fp32's (resnet_small's many small
        // tensors, fp32 biases and per-channel scales weigh more).
        const std::string fp32 = onnx::exportOnnx(q.dequantized(), {"test"});
        EXPECT_LT(double(bytes.size()), (std::string(preset) == "resnet_small" ? 0.45 : 0.3) * double(fp32.size()))
            << bytes.size() << " vs " << fp32.size();
    }
}

TEST_F(OnnxQuantized, AFileOnDiskReadsBackAndTheFp32ImporterNamesItForWhatItIs) {
    CpuDevice dev(1);
    const QuantizedGraph q = testonnx::quantizedGraph("cnn", dev);
    onnx::QuantizationRecord record;  // measured nothing: no accuracies, no test examples
    record.fp32_weight_bytes = inference::fp32WeightBytes(q.dequantized());
    record.int8_weight_bytes = q.weightBytes();
    onnx::writeQuantizedOnnx(q, record, path("cnn-int8.onnx"), {"test"});
    const onnx::QuantizedModel back = onnx::readQuantizedOnnx(path("cnn-int8.onnx"));
    expectSameQuantizedGraph(back.graph, q);
    EXPECT_EQ(back.record, record);
    EXPECT_FALSE(back.record.fp32_accuracy.has_value());
    try {
        onnx::readOnnx(path("cnn-int8.onnx"));
        ADD_FAILURE() << "the fp32 importer read a QDQ file";
    } catch (const onnx::OnnxError& e) {
        EXPECT_NE(std::string(e.what()).find("quantized (QDQ) model"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("(DequantizeLinear)"), std::string::npos) << e.what();
    }
    // And an fp32 file is not an int8 one.
    onnx::writeOnnx(q.dequantized(), path("cnn.onnx"), {"test"});
    try {
        onnx::readQuantizedOnnx(path("cnn.onnx"));
        ADD_FAILURE() << "an fp32 file read as int8";
    } catch (const onnx::OnnxError& e) {
        EXPECT_NE(std::string(e.what()).find("metadata 'trainbench.precision' is missing"), std::string::npos) << e.what();
    }
}

TEST_F(OnnxQuantized, TheFileIsStandardQdq) {
    CpuDevice dev(1);
    const QuantizedGraph q = testonnx::quantizedGraph("mlp", dev);
    ::onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(onnx::exportQuantizedOnnx(q, sampleRecord(q), {"test"})));
    std::map<std::string, const ::onnx::TensorProto*> init;
    for (const ::onnx::TensorProto& t : m.graph().initializer()) init[t.name()] = &t;
    int quantize = 0, dequantize = 0;
    for (const ::onnx::NodeProto& n : m.graph().node()) {
        if (n.op_type() == "QuantizeLinear") ++quantize;
        if (n.op_type() == "DequantizeLinear") ++dequantize;
        if (n.op_type() == "Gemm") {
            // A Gemm reads its weight from a DequantizeLinear, not a float initializer.
            EXPECT_FALSE(init.count(n.input(1))) << n.name();
            EXPECT_EQ(init.at(n.input(1) + "/quantized")->data_type(), ::onnx::TensorProto::INT8);
            EXPECT_EQ(init.at(n.input(1) + "/zero_point")->data_type(), ::onnx::TensorProto::INT8);
            EXPECT_EQ(init.at(n.input(1) + "/scale")->dims(0), init.at(n.input(1) + "/quantized")->dims(0));
        }
    }
    EXPECT_EQ(quantize, static_cast<int>(q.activations.size()));
    EXPECT_EQ(dequantize, static_cast<int>(q.activations.size() + q.weights.size()));
    // The input's codes are u8 (pixels are never negative).
    EXPECT_EQ(init.at(q.graph.input + "/zero_point")->data_type(), ::onnx::TensorProto::UINT8);
    std::map<std::string, std::string> meta;
    for (const auto& e : m.metadata_props()) meta[e.key()] = e.value();
    EXPECT_EQ(meta["trainbench.precision"], "int8");
    EXPECT_EQ(meta["trainbench.calibration.batches"], "2");
    EXPECT_EQ(meta["trainbench.calibration.batch_size"], "16");
    EXPECT_EQ(meta["trainbench.calibration.examples"], "32");
    EXPECT_EQ(meta["trainbench.calibration.method"], "minmax");
    EXPECT_EQ(meta["trainbench.calibration.seed"], "5");
    EXPECT_EQ(meta["trainbench.int8_weight_bytes"], std::to_string(q.weightBytes()));
    EXPECT_EQ(meta["trainbench.fp32_test_accuracy"], "0.748");
    EXPECT_EQ(meta["trainbench.test_examples"], "10000");
}

// The message importing the exported W1 after `edit` throws, or a failure.
std::string refusal(const std::function<void(::onnx::ModelProto&)>& edit) {
    CpuDevice dev(1);
    static const QuantizedGraph q = testonnx::quantizedGraph("mlp", dev);
    ::onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromString(onnx::exportQuantizedOnnx(q, {}, {"test"})));
    edit(m);
    std::string bytes;
    m.SerializeToString(&bytes);
    try {
        onnx::importQuantizedOnnx(bytes, "m.onnx");
    } catch (const onnx::OnnxError& e) {
        return e.what();
    }
    ADD_FAILURE() << "imported";
    return {};
}

::onnx::NodeProto* nodeNamed(::onnx::ModelProto& m, const std::string& name) {
    for (::onnx::NodeProto& n : *m.mutable_graph()->mutable_node())
        if (n.name() == name) return &n;
    ADD_FAILURE() << "no node " << name;
    return nullptr;
}

::onnx::TensorProto* initializerNamed(::onnx::ModelProto& m, const std::string& name) {
    for (::onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer())
        if (t.name() == name) return &t;
    ADD_FAILURE() << "no initializer " << name;
    return nullptr;
}

TEST(OnnxQuantizedRefusals, OtherQdqPatternsAreRefusedNamingTheNode) {
    CpuDevice dev(1);
    const QuantizedGraph q = testonnx::quantizedGraph("mlp", dev);
    const graph::Node& gemm = q.graph.nodes.at(q.graph.nodes.size() - 2);  // a hidden layer: its output in codes
    ASSERT_EQ(gemm.kind, graph::OpKind::Gemm);
    const std::string h = gemm.output, w = gemm.inputs[1];

    // An asymmetric activation (zero point 5).
    std::string e = refusal([&](::onnx::ModelProto& m) { initializerNamed(m, h + "/zero_point")->set_raw_data(std::string(1, '\x05')); });
    EXPECT_NE(e.find("m.onnx: node '" + h + "/quantize' (QuantizeLinear): zero point '" + h + "/zero_point' is not one 0"), std::string::npos) << e;

    // A weight dequantized per tensor (axis 1 is ONNX's default).
    e = refusal([&](::onnx::ModelProto& m) { nodeNamed(m, w + "/dequantize")->mutable_attribute(0)->set_i(1); });
    EXPECT_NE(e.find("node '" + w + "/dequantize' (DequantizeLinear): weight '" + w + "/quantized' must be dequantized per output channel"),
              std::string::npos) << e;

    // A weight in int32 (as a bias of another quantizer's would be).
    e = refusal([&](::onnx::ModelProto& m) { initializerNamed(m, w + "/quantized")->set_data_type(::onnx::TensorProto::INT32); });
    EXPECT_NE(e.find("node '" + w + "/dequantize' (DequantizeLinear): weight '" + w + "/quantized' is of data type 6"), std::string::npos) << e;

    // The codes of a pair read by something besides its DequantizeLinear.
    e = refusal([&](::onnx::ModelProto& m) {
        ::onnx::NodeProto* relu = m.mutable_graph()->add_node();
        relu->set_name("extra");
        relu->set_op_type("Relu");
        relu->add_input(h + "/quantized");
        relu->add_output("extra");
    });
    EXPECT_NE(e.find("node '" + h + "/quantize' (QuantizeLinear): its codes '" + h + "/quantized' must be read by one DequantizeLinear"),
              std::string::npos) << e;

    // A DequantizeLinear of neither a weight nor a QuantizeLinear.
    e = refusal([&](::onnx::ModelProto& m) {
        ::onnx::NodeProto* dq = m.mutable_graph()->add_node();
        *dq = *nodeNamed(m, h + "/dequantize");
        dq->set_name("stray");
        dq->set_input(0, h);
        dq->set_output(0, "stray");
    });
    EXPECT_NE(e.find("node 'stray' (DequantizeLinear): reads '" + h + "', neither an int8 initializer"), std::string::npos) << e;

    // An activation int8 holds in codes left in float (its pair taken out).
    e = refusal([&](::onnx::ModelProto& m) {
        auto* nodes = m.mutable_graph()->mutable_node();
        for (int i = nodes->size() - 1; i >= 0; --i)
            if (nodes->Get(i).name() == h + "/quantize" || nodes->Get(i).name() == h + "/dequantize") nodes->DeleteSubrange(i, 1);
        for (::onnx::NodeProto& n : *nodes)
            for (std::string& in : *n.mutable_input())
                if (in == h + "/dequantized") in = h;
        auto* inits = m.mutable_graph()->mutable_initializer();
        for (int i = inits->size() - 1; i >= 0; --i)
            if (inits->Get(i).name() == h + "/scale" || inits->Get(i).name() == h + "/zero_point") inits->DeleteSubrange(i, 1);
    });
    EXPECT_NE(e.find("node '" + gemm.name + "' (Gemm): its output '" + h + "' is not quantized"), std::string::npos) << e;

    // The calibration not recorded.
    e = refusal([&](::onnx::ModelProto& m) {
        auto* props = m.mutable_metadata_props();
        for (int i = props->size() - 1; i >= 0; --i)
            if (props->Get(i).key() == "trainbench.calibration.seed") props->DeleteSubrange(i, 1);
    });
    EXPECT_NE(e.find("m.onnx: metadata 'trainbench.calibration.seed' is missing"), std::string::npos) << e;
}

}  // namespace
}  // namespace trainbench::engine
