// Models exported by PyTorch (tests/fixtures/onnx/make.py, Debian's python3-torch; the small files
// are committed): a MobileNetV2 stem and inverted-residual block (depthwise convolution, ReLU6 as
// Clip with constant bounds, the residual Add, Dropout removed by the exporter) at opset 13 and at
// opset 10 (Clip's bounds as attributes), and a grouped convolution. trainbench's CompiledGraph and
// its reference evaluator reproduce PyTorch's outputs within 1e-5 relative; export then import is
// the same graph with bit-identical predictions; int8 refuses what it does not run, naming the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/emulation/graphops.h"
#include "engine/graph/graphpasses.h"
#include "engine/graph/layersfromgraph.h"
#include "engine/graph/referenceevaluator.h"
#include "engine/inference/calibration.h"
#include "engine/inference/compiledgraph.h"
#include "engine/onnx/onnxerror.h"
#include "engine/onnx/onnxexport.h"
#include "engine/onnx/onnximport.h"
#include "engine/optim/optimizerconfig.h"
#include "tests/engine/onnxgraphs.h"

namespace trainbench::engine {
namespace {

const std::string kFixtures = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/";

struct OnnxFixtureFiles {
    graph::Graph graph;
    std::vector<float> input, output;  // PyTorch's output for the input
    int64_t examples = 0;
};

OnnxFixtureFiles loadOnnxFixture(const std::string& name) {
    OnnxFixtureFiles f;
    f.graph = onnx::readOnnx(kFixtures + name + ".onnx");
    f.input = testonnx::readValues<float>(kFixtures + name + ".input.bin");
    f.output = testonnx::readValues<float>(kFixtures + name + ".output.bin");
    std::ifstream meta(kFixtures + name + ".json");
    const nlohmann::json j = nlohmann::json::parse(meta);
    EXPECT_EQ(f.graph.sample_shape, j["input_shape"].get<graph::Dims>()) << name;
    EXPECT_EQ(f.graph.classes, j["classes"].get<int64_t>()) << name;
    f.examples = static_cast<int64_t>(f.output.size()) / f.graph.classes;
    return f;
}

std::vector<float> runCompiled(const graph::Graph& g, const std::vector<float>& x, int64_t n, int threads) {
    CpuDevice dev(threads);
    inference::CompiledGraph c(g, dev);
    std::vector<float> logits(static_cast<size_t>(n * g.classes));
    c.run(x.data(), n, logits.data());
    return logits;
}

// What int8 says when it refuses the fixture's graph (a failure when it quantizes it).
std::string int8Refusal(const OnnxFixtureFiles& f) {
    inference::CalibrationOptions options;
    options.batches = 1;
    options.batch_size = 4;
    try {
        inference::quantizeGraph(f.graph, f.input.data(), f.examples, options);
    } catch (const graph::GraphError& e) {
        return e.what();
    }
    ADD_FAILURE() << "int8 quantized a graph it should refuse";
    return "";
}

// Every value within 1e-5 of the largest magnitude (relative to the outputs' scale).
void expectClose(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    float scale = 0.0f;
    for (float v : want) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * scale) << what << " [" << i << "]";
}

class OnnxFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxFixture, CompiledAndReferenceMatchPyTorch) {
    const OnnxFixtureFiles f = loadOnnxFixture(GetParam());
    expectClose(graph::evaluateReference(f.graph, f.input.data(), f.examples), f.output, "reference");
    for (int threads : {1, 2}) expectClose(runCompiled(f.graph, f.input, f.examples, threads), f.output, "compiled");
    // As served: batch norm folded (none left here: the exporter folded them), ReLUs fused.
    expectClose(runCompiled(graph::optimizeForInference(f.graph), f.input, f.examples, 1), f.output, "optimized");
}

TEST_P(OnnxFixture, ExportThenImportIsTheSameGraphAndTheSamePredictions) {
    const OnnxFixtureFiles f = loadOnnxFixture(GetParam());
    const graph::Graph back = onnx::importOnnx(onnx::exportOnnx(f.graph, {"test"}), "memory");
    testonnx::expectSameGraph(back, f.graph);
    EXPECT_EQ(runCompiled(back, f.input, f.examples, 1), runCompiled(f.graph, f.input, f.examples, 1));
    EXPECT_EQ(onnx::exportOnnx(back, {"test"}), onnx::exportOnnx(f.graph, {"test"}));
}

INSTANTIATE_TEST_SUITE_P(PyTorch, OnnxFixture, ::testing::Values("mobilenet_block", "mobilenet_block_op10", "grouped_conv", "ops_mix", "windows",
                                                               "encoder", "ceil_pools"));

TEST(OnnxFixtures, TheMobileNetBlockImportsAsDepthwiseConvolutionsAndReluSixes) {
    for (const char* name : {"mobilenet_block", "mobilenet_block_op10"}) {
        const graph::Graph g = onnx::readOnnx(kFixtures + name + ".onnx");
        int depthwise = 0, clips = 0;
        for (const graph::Node& n : g.nodes) {
            if (n.kind == graph::OpKind::Conv && n.group > 1) {
                ++depthwise;
                EXPECT_EQ(n.group, 48) << name << ": the expansion's 16 x 3 channels, one filter each";
                EXPECT_EQ(g.initializers.at(n.inputs[1]).dims, (graph::Dims{48, 1, 3, 3})) << name;
            }
            if (n.kind == graph::OpKind::Clip) {
                ++clips;
                EXPECT_EQ(n.clip_min, 0.0f) << name;
                EXPECT_EQ(n.clip_max, 6.0f) << name;
                EXPECT_EQ(n.inputs.size(), 1u) << name;
            }
        }
        EXPECT_EQ(depthwise, 1) << name;
        EXPECT_EQ(clips, 4) << name;
        // The bounds (Constant nodes at opset 13) are not parameters: what remains is the model's.
        EXPECT_EQ(g.parameterCount(), 3 * 16 * 9 + 16 + 16 * 48 + 48 + 48 * 9 + 48 + 48 * 16 + 16 + 16 * 32 + 32 + 32 * 10 + 10)
            << name;
    }
}

// The ops of ops_mix: estimated op by op (forward and backward), refused by int8 and by training,
// naming the node; PyTorch's count_include_pad AvgPool2d (Pad + AveragePool) is one AveragePool.
TEST(OnnxFixtures, OpsMixIsEstimatedAndRefusedByInt8AndTrainingNamingTheNode) {
    const OnnxFixtureFiles f = loadOnnxFixture("ops_mix");
    int pools = 0, included = 0;
    for (const graph::Node& n : f.graph.nodes)
        if (n.kind == graph::OpKind::AveragePool) {
            ++pools;
            included += n.count_include_pad ? 1 : 0;
        }
    EXPECT_EQ(pools, 3);
    EXPECT_EQ(included, 1);  // AvgPool2d(3, 1, 1): its Pad of 1 folded in; AvgPool2d(2)'s Pad of 0 removed
    std::set<std::string> kinds;
    for (const OpDesc& op : trainingOpGraph(f.graph, 32, OptimizerConfig{}).ops) kinds.insert(op.cost.kind);
    for (const char* k : {"eltwise_logistic_forward", "eltwise_logistic_backward", "eltwise_tanh_forward", "binary_mul",
                          "binary_sub", "binary_div", "pooling_avg_forward", "pooling_avg_backward", "softmax_forward"})
        EXPECT_TRUE(kinds.count(k)) << k;
    EXPECT_GT(inferenceOpGraph(f.graph, 1).ops.size(), 8u);

    const std::string refusal = int8Refusal(f);
    EXPECT_NE(refusal.find(": int8 does not run Sigmoid yet; serve this model in fp32"), std::string::npos) << refusal;
    try {
        (void)graph::layersFromGraph(f.graph);
        FAIL() << "ops_mix trained";
    } catch (const graph::GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("(Sigmoid)"), std::string::npos) << e.what();
    }
}

// Windows that are not square: each side's padding, the width's kernel and stride, dilation, and a
// ZeroPad2d folded into the convolution after it; int8 and training refuse them naming the window.
TEST(OnnxFixtures, RectangularDilatedAndAsymmetricWindowsImportAsTheyAre) {
    const OnnxFixtureFiles f = loadOnnxFixture("windows");
    std::vector<std::string> windows;
    for (const graph::Node& n : f.graph.nodes)
        if (n.kind == graph::OpKind::Conv || n.kind == graph::OpKind::MaxPool) windows.push_back(n.windowText());
    EXPECT_EQ(windows, (std::vector<std::string>{
                           "3x1 kernel, stride 1x2, pads 1,0,1,0 (top, left, bottom, right)",
                           "3x3 kernel, stride 1x1, pads 2,2,2,2 (top, left, bottom, right), dilation 2x2",
                           "3x3 kernel, stride 2x2, pads 0,0,1,1 (top, left, bottom, right)",
                           "2x1 kernel, stride 2x1, pads 0,0,0,0 (top, left, bottom, right)"}));
    const std::string refusal = int8Refusal(f);
    EXPECT_NE(refusal.find("int8 runs square windows with the same padding on every side only, this one has a 3x1 kernel"),
              std::string::npos)
        << refusal;
    try {
        (void)graph::layersFromGraph(f.graph);
        FAIL() << "a 3x1 kernel trained";
    } catch (const graph::GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("(Conv with a 3x1 kernel, stride 1x2"), std::string::npos) << e.what();
    }
    // Estimated with the kernels' true sizes: 3x1 reads a third of what 3x3 would.
    const OpGraph ops = inferenceOpGraph(f.graph, 1);
    ASSERT_FALSE(ops.ops.empty());
    EXPECT_NE(ops.ops[0].cost.shape.find("weights 4x2x3x1"), std::string::npos) << ops.ops[0].cost.shape;
}

// ceil_mode 1: the windows that hang over the input's end become padding at the bottom and right,
// never the max and never counted in the average (PyTorch's outputs say so: OnnxFixture above).
TEST(OnnxFixtures, CeilModeWindowsBecomePaddingAtTheEnd) {
    const OnnxFixtureFiles f = loadOnnxFixture("ceil_pools");
    std::vector<std::string> windows;
    for (const graph::Node& n : f.graph.nodes)
        if (n.kind == graph::OpKind::MaxPool || n.kind == graph::OpKind::AveragePool) {
            windows.push_back(n.windowText());
            EXPECT_FALSE(n.count_include_pad) << n.name;
        }
    EXPECT_EQ(windows, (std::vector<std::string>{"3x3 kernel, stride 2x2, pads 1,1,2,2 (top, left, bottom, right)",
                                                 "4x4 kernel, stride 3x3, pads 0,0,1,1 (top, left, bottom, right)"}));
}

TEST(OnnxFixtures, Int8RefusesDepthwiseConvolutionsAndClipNamingTheNode) {
    const OnnxFixtureFiles f = loadOnnxFixture("mobilenet_block");
    const std::string what = int8Refusal(f);
    EXPECT_TRUE(what.find("(Clip): int8 does not run Clip") != std::string::npos ||
                what.find("(Conv): int8 runs convolutions of group 1 only") != std::string::npos)
        << what;
    EXPECT_NE(what.find("serve this model in fp32"), std::string::npos) << what;
}

}  // namespace
}  // namespace trainbench::engine

namespace trainbench::engine {
namespace {

// torchvision's ResNet-50 stripped to shapes (tests/fixtures/onnx/full/make.py): refused by a plain
// import naming an initializer without data; with shapes_only it imports as a weightless graph of
// ResNet-50's 25.6 M parameters whose batch norms stay nodes, and nothing runs or exports it.
TEST(OnnxStripped, AModelStrippedToShapesImportsOnlyForEstimatesAndNothingRunsIt) {
    const std::string path = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/full/resnet50.onnx";
    try {
        onnx::readOnnx(path);
        FAIL() << "expected an OnnxError";
    } catch (const onnx::OnnxError& e) {
        EXPECT_NE(std::string(e.what()).find("elements but no data (a model stripped to shapes: only estimate takes it)"),
                  std::string::npos)
            << e.what();
    }
    const graph::Graph g = onnx::readOnnx(path, {.shapes_only = true});
    EXPECT_TRUE(g.weightless);
    EXPECT_EQ(g.sample_shape, (graph::Dims{3, 224, 224}));
    EXPECT_EQ(g.classes, 1000);
    int bn = 0;
    for (const graph::Node& n : g.nodes) bn += n.kind == graph::OpKind::BatchNormalization;
    EXPECT_EQ(bn, 53);
    // ResNet-50's 25,557,032 trainable values, counted node by node (PyTorch's exporter shares equal
    // initializers between nodes through Identity nodes, which the import passes through).
    EXPECT_EQ(inferenceOpGraph(g, 1).param_count, 25557032);
    CpuDevice dev(1);
    EXPECT_THROW({ inference::CompiledGraph c(g, dev); }, graph::GraphError);
    EXPECT_THROW((onnx::exportOnnx(g, {"x"})), onnx::OnnxError);
}

}  // namespace
}  // namespace trainbench::engine
