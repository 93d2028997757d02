// A BERT-style encoder as PyTorch exports it (tests/fixtures/onnx/encoder.py, make.py's `encoder`: two
// layers, committed with PyTorch's outputs) and BERT-base stripped to shapes (full/make.py): token ids
// in, the heads' Shape/Gather/Unsqueeze/Concat arithmetic folded at import into Reshapes of fixed
// per-example shapes, embeddings, batched MatMuls, LayerNorms and GELU's Erf. The numbers are checked
// against PyTorch in test_onnxfixtures.cpp (the `encoder` fixture); here what the import makes of the
// graph, what the estimates count, and the errors for ids and shapes that do not fit.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/emulation/graphops.h"
#include "engine/graph/layersfromgraph.h"
#include "engine/graph/referenceevaluator.h"
#include "engine/inference/calibration.h"
#include "engine/inference/compiledgraph.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxexport.h"
#include "engine/onnx/onnximport.h"
#include "engine/onnx/onnxmodel.h"
#include "engine/optim/optimizerconfig.h"
#include "tests/engine/onnxgraphs.h"

namespace trainbench::engine {
namespace {

const std::string kFixtures = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/";

std::map<graph::OpKind, int> kindCounts(const graph::Graph& g) {
    std::map<graph::OpKind, int> count;
    for (const graph::Node& n : g.nodes) ++count[n.kind];
    return count;
}

std::string errorOf(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(OnnxTransformer, TheEncoderImportsAsEmbeddingsAttentionAndLayerNorms) {
    const graph::Graph g = onnx::readOnnx(kFixtures + "encoder.onnx");
    EXPECT_TRUE(g.integer_input);
    EXPECT_EQ(g.sample_shape, (graph::Dims{8}));
    EXPECT_EQ(g.classes, 3);
    std::map<graph::OpKind, int> count = kindCounts(g);
    EXPECT_EQ(count[graph::OpKind::Gather], 2);  // the token embedding and the first token, x[:, 0]
    EXPECT_EQ(count[graph::OpKind::LayerNormalization], 5);
    EXPECT_EQ(count[graph::OpKind::MatMul], 16);  // per layer q, k, v, o, two feed-forward, Q.K^T and P.V
    EXPECT_EQ(count[graph::OpKind::Reshape], 8);
    EXPECT_EQ(count[graph::OpKind::Transpose], 8);
    EXPECT_EQ(count[graph::OpKind::Erf], 2);
    EXPECT_EQ(count[graph::OpKind::Softmax], 2);
    EXPECT_EQ(count[graph::OpKind::Gemm], 2);
    // The heads' view, x.view(x.size(0), x.size(1), 2, 8), computed here once: [8, 16] -> [8, 2, 8].
    for (const graph::Node& n : g.nodes)
        if (n.kind == graph::OpKind::Reshape) {
            EXPECT_TRUE(n.ints == (graph::Dims{8, 2, 8}) || n.ints == (graph::Dims{8, 16})) << n.name;
        }
    const graph::Node& embedding = g.nodes.front();
    EXPECT_EQ(embedding.kind, graph::OpKind::Gather);
    EXPECT_EQ(embedding.name, "/tok/Gather");
    EXPECT_EQ(embedding.inputs, (std::vector<std::string>{"input", "tok.weight"}));
    // Every parameter PyTorch counts (sum of numel()), the position embedding's rows included.
    EXPECT_EQ(inferenceOpGraph(g, 1).param_count, 5731);
}

TEST(OnnxTransformer, AnIdOutsideTheVocabularyIsAnErrorNamingTheNodeAndThePosition) {
    const graph::Graph g = onnx::readOnnx(kFixtures + "encoder.onnx");
    std::vector<float> ids = testonnx::readValues<float>(kFixtures + "encoder.input.bin");
    ASSERT_EQ(ids.size(), 32u);
    for (float bad : {50.0f, -51.0f, 2.5f}) {
        ids[11] = bad;
        const std::string reference = errorOf([&] { graph::evaluateReference(g, ids.data(), 4); });
        EXPECT_NE(reference.find("node '/tok/Gather' (Gather): id "), std::string::npos) << reference;
        EXPECT_NE(reference.find("50-row table 'tok.weight'"), std::string::npos) << reference;
        CpuDevice dev(1);
        inference::CompiledGraph c(g, dev);
        std::vector<float> logits(12);
        const std::string compiled = errorOf([&] { c.run(ids.data(), 4, logits.data()); });
        EXPECT_NE(compiled.find("node '/tok/Gather' (Gather): id "), std::string::npos) << compiled;
        EXPECT_NE(compiled.find("at input position 11 is not a row of the 50-row table 'tok.weight'"), std::string::npos) << compiled;
    }
    // A negative id counts from the end, as ONNX's Gather does: -1 is row 49.
    ids[11] = -1.0f;
    std::vector<float> same = ids;
    same[11] = 49.0f;
    EXPECT_EQ(graph::evaluateReference(g, ids.data(), 4), graph::evaluateReference(g, same.data(), 4));
}

TEST(OnnxTransformer, Int8AndTrainingRefuseTheEncoderNamingTheNodes) {
    const graph::Graph g = onnx::readOnnx(kFixtures + "encoder.onnx");
    inference::CalibrationOptions options;
    options.batches = 1;
    options.batch_size = 4;
    const std::vector<float> ids = testonnx::readValues<float>(kFixtures + "encoder.input.bin");
    const std::string int8 = errorOf([&] { inference::quantizeGraph(g, ids.data(), 4, options); });
    EXPECT_NE(int8.find("node '/tok/Gather' (Gather): int8 does not run Gather yet; serve this model in fp32"), std::string::npos)
        << int8;
    const std::string training = errorOf([&] { (void)graph::layersFromGraph(g); });
    EXPECT_NE(training.find("'/tok/Gather' (Gather)"), std::string::npos) << training;
    EXPECT_NE(training.find("'/layers.0/q/MatMul' (MatMul)"), std::string::npos) << training;
    EXPECT_NE(training.find("(LayerNormalization)"), std::string::npos) << training;
}

// Estimates count a transformer's work: the training step has the ops of attention and its
// gradients, and the FLOPs of its matrix products are exactly the model's.
TEST(OnnxTransformer, BertBaseStrippedToShapesIsEstimatedWithItsParametersAndFlops) {
    const graph::Graph g = onnx::readOnnx(kFixtures + "full/bert_base.onnx", {.shapes_only = true});
    EXPECT_TRUE(g.weightless);
    EXPECT_TRUE(g.integer_input);
    EXPECT_EQ(g.sample_shape, (graph::Dims{128}));
    EXPECT_EQ(g.classes, 2);
    // PyTorch's count for the module (encoder.py at BERT-base's sizes); its LayerNorms share their
    // initial ones and zeros through Identity nodes, each counted where it is used.
    const OpGraph inference = inferenceOpGraph(g, 1);
    EXPECT_EQ(inference.param_count, 109187330);
    const double s = 128, h = 768, f = 3072, heads = 12, layers = 12;
    const double weights = layers * (4 * h * h + 2 * h * f) * s * 2;        // q, k, v, o and the feed-forward, per token
    const double attention = layers * 2 * (heads * s * s * (h / heads)) * 2;  // Q.K^T and P.V
    const double head = 2 * h * h + 2 * h * 2;                                // pooler and classifier (one token)
    double matrix = 0;
    for (const OpDesc& op : inference.ops)
        if (!op.matrix.empty()) matrix += op.cost.flops;
    // Gemm's and MatMul's bias adds are counted in their own ops: the products alone, within a bias's worth.
    EXPECT_NEAR(matrix, weights + attention + head, 1e-6 * matrix);
    std::set<std::string> kinds;
    for (const OpDesc& op : trainingOpGraph(g, 8, OptimizerConfig{}).ops) kinds.insert(op.cost.kind);
    for (const char* k : {"gather_forward", "gather_backward", "matmul_forward", "matmul_backward_data", "layer_normalization_forward",
                          "layer_normalization_backward", "softmax_forward", "softmax_backward", "eltwise_erf_forward",
                          "eltwise_erf_backward", "reorder", "inner_product_backward_weights"})
        EXPECT_TRUE(kinds.count(k)) << k;
}

// PyTorch's exact GELU as it exports it (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5): CompiledGraph
// runs it as one eltwise_gelu_erf when nothing else reads its parts (after a MatMul and its bias it
// is the matmul's post-op: the encoder fixture), node by node otherwise; the values are GELU's.
TEST(OnnxTransformer, AGeluPatternRunsAsGeluFusedOrNot) {
    graph::Graph g;
    g.input = "x";
    g.sample_shape = {4};
    g.classes = 4;
    g.initializers["sqrt2"] = {{}, {1.41421356f}};
    g.initializers["one"] = {{}, {1.0f}};
    g.initializers["half"] = {{}, {0.5f}};
    const auto node = [](const char* name, graph::OpKind kind, std::vector<std::string> inputs) {
        graph::Node n;
        n.name = name;
        n.kind = kind;
        n.inputs = std::move(inputs);
        n.output = name;
        return n;
    };
    g.nodes = {node("d", graph::OpKind::Div, {"x", "sqrt2"}), node("e", graph::OpKind::Erf, {"d"}),
               node("a", graph::OpKind::Add, {"e", "one"}), node("m", graph::OpKind::Mul, {"x", "a"}),
               node("y", graph::OpKind::Mul, {"m", "half"})};
    g.output = "y";
    const std::vector<float> x{1.0f, -1.0f, 0.0f, 2.5f};
    const std::vector<float> gelu{0.8413447f, -0.1586553f, 0.0f, 2.4844758f};  // x * Phi(x)
    CpuDevice dev(1);
    std::vector<float> fused(4);
    inference::CompiledGraph(g, dev).run(x.data(), 1, fused.data());
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(fused[i], gelu[i], 2e-6f) << i;
    // Another reader of x * (erf + 1): no fusion, the same values.
    g.nodes.push_back(node("z", graph::OpKind::Add, {"m", "y"}));
    g.output = "z";
    std::vector<float> unfused(4);
    inference::CompiledGraph(g, dev).run(x.data(), 1, unfused.data());
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(unfused[i], 3.0f * gelu[i], 6e-6f) << i;
    EXPECT_EQ(graph::evaluateReference(g, x.data(), 1).size(), 4u);
}

TEST(OnnxTransformer, ExportWritesOpsetSeventeenAndIntegerIdsAndReadsBackTheSame) {
    const graph::Graph g = onnx::readOnnx(kFixtures + "encoder.onnx");
    const ::onnx::ModelProto m = onnx::parseModel(onnx::exportOnnx(g, {"test"}), "memory");
    EXPECT_EQ(m.opset_import(0).version(), 17);
    EXPECT_EQ(m.graph().input(0).type().tensor_type().elem_type(), ::onnx::TensorProto::INT64);
    const graph::Graph back = onnx::importOnnx(onnx::exportOnnx(g, {"test"}), "memory");
    testonnx::expectSameGraph(back, g);
    EXPECT_TRUE(back.integer_input);
}

}  // namespace
}  // namespace trainbench::engine
