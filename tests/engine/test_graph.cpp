// The inference graph (engine/graph/): a trained model's graph computes what the model computes
// (checked with the plain-loop reference evaluator), folding batch norm and fusing ReLU keep the
// predictions, and a graph that does not hold together is refused naming the node.
#include <gtest/gtest.h>

#include "engine/graph/graphpasses.h"
#include "engine/graph/referenceevaluator.h"
#include "tests/engine/inferencemodels.h"

namespace trainbench::engine {
namespace {

using namespace testmodels;
using namespace testinference;
using graph::Graph;
using graph::GraphError;
using graph::OpKind;

LayerSpec bn() { return of(LayerKind::BatchNorm); }
LayerSpec dropout(float rate) { LayerSpec s = of(LayerKind::Dropout); s.rate = rate; return s; }
LayerSpec pool(int size, int stride, int padding) {
    LayerSpec s = of(LayerKind::MaxPool2D); s.kernel = size; s.stride = stride; s.padding = padding; return s;
}

// Every layer kind but bottleneck in one model: padded strided convolution, batch norm after a
// convolution and after a dense layer, padded pooling, dropout.
ModelSpec everyKind() {
    return custom({conv(8, 3, 2, 1), bn(), relu, pool(3, 2, 1), conv(16, 3, 1, 1, false), bn(), relu,
                   of(LayerKind::GlobalAvgPool), dense(12), bn(), relu, dropout(0.5f), dense(5)});
}

// The message of the GraphError `g.validate()` throws; fails the test when it throws none.
std::string validationError(const Graph& g) {
    try {
        g.validate();
    } catch (const GraphError& e) {
        return e.what();
    }
    ADD_FAILURE() << "validate() accepted the graph";
    return {};
}

TEST(Graph, OpKindNamesAreOnnxOpTypesAndParseBack) {
    for (OpKind k : {OpKind::Conv, OpKind::Gemm, OpKind::BatchNormalization, OpKind::Relu, OpKind::MaxPool,
                     OpKind::GlobalAveragePool, OpKind::Flatten, OpKind::Add, OpKind::Clip, OpKind::Sigmoid, OpKind::Tanh,
                     OpKind::AveragePool, OpKind::Softmax, OpKind::Mul, OpKind::Sub, OpKind::Div, OpKind::MatMul,
                     OpKind::Gather, OpKind::LayerNormalization, OpKind::Reshape, OpKind::Transpose, OpKind::Erf, OpKind::Concat})
        EXPECT_EQ(graph::parseOpKind(graph::opKindName(k)), k);
    EXPECT_EQ(graph::opKindName(OpKind::BatchNormalization), std::string("BatchNormalization"));
    EXPECT_EQ(graph::opKindName(OpKind::AveragePool), std::string("AveragePool"));
    EXPECT_EQ(graph::opKindName(OpKind::LayerNormalization), std::string("LayerNormalization"));
    EXPECT_FALSE(graph::parseOpKind("InstanceNormalization"));
    EXPECT_FALSE(graph::parseOpKind("conv"));
}

TEST(Graph, FromModelKeepsEveryParameterAndDropsDropout) {
    CpuDevice dev(1);
    const ModelSpec spec = everyKind();
    Model m(spec, {3, 12, 12}, 5, dev, 7);
    const Graph g = graphOf(m, spec);
    EXPECT_EQ(g.parameterCount(), m.paramCount() + static_cast<int64_t>(m.state().size()));
    for (const auto& node : g.nodes) EXPECT_EQ(node.name.find("dropout"), std::string::npos) << node.name;
    EXPECT_EQ(g.initializers.at("conv2d_0.weight").dims, (graph::Dims{8, 3, 3, 3}));
    EXPECT_EQ(g.initializers.at("dense_8.weight").dims, (graph::Dims{12, 16}));
    EXPECT_EQ(g.valueShapes().at("maxpool2d_3"), (graph::Dims{8, 3, 3}));
    EXPECT_EQ(g.valueShapes().at(g.output), (graph::Dims{5}));
    // The buffers must be the model's: one value short is refused with both sizes.
    std::vector<float> params(m.params(), m.params() + m.paramCount() - 1);
    EXPECT_THROW(graph::graphFromModel(spec, {3, 12, 12}, 5, params, m.state()), GraphError);
}

TEST(Graph, ReferenceEvaluatorMatchesTheTrainedModel) {
    CpuDevice dev(2);
    for (const auto& [spec, shape] : {std::pair{everyKind(), Dims{3, 12, 12}}, std::pair{preset("resnet_small"), Dims{1, 28, 28}}}) {
        Model m(spec, shape, spec.preset.empty() ? 5 : 10, dev, 11);
        trainSteps(m, 3, 100);
        const auto x = testref::randomValues(7 * testref::product(shape), 5);
        const auto want = modelLogits(m, x, 7);
        const Graph g = graphOf(m, spec);
        EXPECT_LE(maxRelativeError(graph::evaluateReference(g, x.data(), 7), want), 1e-5) << spec.preset;
    }
}

TEST(Graph, FoldingAndFusingKeepPredictions) {
    CpuDevice dev(2);
    const ModelSpec spec = everyKind();
    Model m(spec, {3, 12, 12}, 5, dev, 3);
    trainSteps(m, 3, 200);
    const Graph g = graphOf(m, spec);
    const Graph folded = graph::fuseRelu(graph::foldBatchNorm(g));
    folded.validate();
    for (const auto& node : folded.nodes) {
        EXPECT_NE(node.kind, OpKind::BatchNormalization) << node.name;
        EXPECT_NE(node.kind, OpKind::Relu) << node.name;
    }
    EXPECT_TRUE(folded.nodes[0].fused_relu);
    EXPECT_EQ(folded.nodes[0].inputs.size(), 3u);  // the folded batch norm is its bias now
    EXPECT_EQ(folded.initializers.count("batch_norm_1.mean"), 0u);
    const auto x = testref::randomValues(7 * 3 * 12 * 12, 9);
    EXPECT_LE(maxRelativeError(graph::evaluateReference(folded, x.data(), 7), graph::evaluateReference(g, x.data(), 7)),
              1e-5);
}

TEST(Graph, BottleneckBecomesConvolutionsAndAnAddWithFusedRelu) {
    CpuDevice dev(1);
    const ModelSpec spec = preset("resnet_small");
    Model m(spec, {1, 28, 28}, 10, dev, 1);
    const Graph g = graph::fuseRelu(graph::foldBatchNorm(graphOf(m, spec)));
    int adds = 0, convs = 0;
    for (const auto& node : g.nodes) {
        adds += node.kind == OpKind::Add && node.fused_relu;
        convs += node.kind == OpKind::Conv;
    }
    EXPECT_EQ(adds, 3);
    EXPECT_EQ(convs, 1 + 3 * 3 + 2);  // stem, three per block, two projection shortcuts
    const auto& add = *std::find_if(g.nodes.begin(), g.nodes.end(), [](const auto& n) { return n.name == "bottleneck_3/add"; });
    EXPECT_EQ(add.inputs, (std::vector<std::string>{"bottleneck_3/bn_c", "bottleneck_3/bn_shortcut"}));
}

Graph smallGraph() {
    CpuDevice dev(1);
    const ModelSpec spec = preset("mlp");
    Model m(spec, {1, 28, 28}, 10, dev, 1);
    return graphOf(m, spec);
}

TEST(Graph, ValidateNamesTheNodeWithWrongWeightDims) {
    Graph g = smallGraph();
    g.initializers.at("dense_3.weight").dims = {256, 500};
    g.initializers.at("dense_3.weight").values.resize(256 * 500);
    const std::string e = validationError(g);
    EXPECT_NE(e.find("node 'dense_3' (Gemm)"), std::string::npos) << e;
    EXPECT_NE(e.find("256x500"), std::string::npos) << e;
    EXPECT_NE(e.find("256x512"), std::string::npos) << e;
}

TEST(Graph, ValidateNamesTheNodeWithAnUndefinedInput) {
    Graph g = smallGraph();
    g.nodes[2].inputs[0] = "dense_9";
    const std::string e = validationError(g);
    EXPECT_NE(e.find("node '" + g.nodes[2].name + "'"), std::string::npos) << e;
    EXPECT_NE(e.find("'dense_9' is not defined"), std::string::npos) << e;
}

TEST(Graph, ValidateNamesTheDuplicateNode) {
    Graph g = smallGraph();
    g.nodes[3].name = g.nodes[1].name;
    const std::string e = validationError(g);
    EXPECT_NE(e.find("node '" + g.nodes[1].name + "' (Gemm): a node of that name comes earlier"), std::string::npos) << e;
}

TEST(Graph, ValidateChecksTheOutputAndInitializerSizes) {
    Graph g = smallGraph();
    g.classes = 11;
    EXPECT_NE(validationError(g).find("expected 11 classes"), std::string::npos);
    g = smallGraph();
    g.initializers.at("dense_5.bias").values.pop_back();
    EXPECT_NE(validationError(g).find("initializer 'dense_5.bias'"), std::string::npos);
    g = smallGraph();
    g.nodes[1].kernel = 3;
    g.nodes[1].kind = OpKind::Conv;
    EXPECT_NE(validationError(g).find("node 'dense_1' (Conv): needs a [channels, height, width] input"),
              std::string::npos);
}

}  // namespace
}  // namespace trainbench::engine
