// Training an imported graph (issue 22): an ONNX model maps onto the engine's layers with its
// initializers as the starting weights. Checked against PyTorch (tests/fixtures/onnx/train/make.py,
// Debian's python3-torch; the small files are committed): an MLP with a 1-d batch norm, a CNN, and a
// tiny ResNet of torchvision's own Bottleneck blocks (projection and identity shortcuts, a strided
// block), and Fashion-MNIST's MLP and CNN. Eval mode gives PyTorch's logits within 1e-5 (from the
// layers, CompiledGraph and the reference evaluator); one training-mode step gives its loss within 1e-5 and its gradients within 1e-4, and
// plain SGD then PyTorch's weights. The mapping is graphFromModel's inverse on every preset, and a
// graph that has nodes without a backward is refused naming each of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/graph/graphfrommodel.h"
#include "engine/graph/layersfromgraph.h"
#include "engine/graph/referenceevaluator.h"
#include "engine/inference/compiledgraph.h"
#include "engine/instrument/opstats.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "engine/onnx/onnximport.h"
#include "engine/onnx/onnxtrainable.h"
#include "engine/optim/optimizer.h"
#include "engine/util/errors.h"
#include "tests/engine/modelspecs.h"
#include "tests/engine/onnxgraphs.h"

namespace trainbench::engine {
namespace {

const std::string kTrainFixtures = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/train/";

float largest(std::span<const float> v) {
    float m = 0.0f;
    for (float x : v) m = std::max(m, std::fabs(x));
    return m;
}

// Within `tolerance` x `scale` (the magnitude the values are relative to).
void expectClose(std::span<const float> got, std::span<const float> want, float tolerance, float scale,
                 const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tolerance * scale) << what << " [" << i << "]";
}

class OnnxTrainingFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxTrainingFixture, OneStepMatchesPyTorchsLossGradientsAndUpdate) {
    const std::string name = GetParam();
    std::ifstream meta(kTrainFixtures + name + ".json");
    const nlohmann::json j = nlohmann::json::parse(meta);
    const std::vector<float> x = testonnx::readValues<float>(kTrainFixtures + name + ".input.bin");
    const std::vector<int32_t> labels = testonnx::readValues<int32_t>(kTrainFixtures + name + ".labels.bin");
    const std::vector<float> wantGrads = testonnx::readValues<float>(kTrainFixtures + name + ".grads.bin");
    const std::vector<float> wantAfter = testonnx::readValues<float>(kTrainFixtures + name + ".after.bin");
    const auto n = static_cast<int64_t>(labels.size());

    const Dims shape = j["input_shape"].get<Dims>();
    const int64_t classes = j["classes"].get<int64_t>();
    ModelSpec spec;
    spec.onnx = kTrainFixtures + name + ".onnx";
    const ModelSpec trainable = onnx::trainableModel(spec, shape, classes);
    ASSERT_FALSE(trainable.layers.empty());
    ASSERT_TRUE(trainable.initial);
    const graph::TrainableLayers t = graph::layersFromGraph(onnx::readOnnx(spec.onnx));

    // Where each parameter lies in the model's buffer, by its ONNX name.
    std::map<std::string, std::pair<size_t, size_t>> at;  // name -> offset, count
    {
        const graph::Graph g = onnx::readOnnx(spec.onnx);
        size_t offset = 0;
        for (const std::string& p : t.param_names) {
            const size_t count = g.initializers.at(p).values.size();
            at[p] = {offset, count};
            offset += count;
        }
        ASSERT_EQ(offset, t.params.size());
    }

    CpuDevice device(1);
    Model model(trainable, shape, classes, device, 7);
    ASSERT_EQ(model.paramCount(), static_cast<int64_t>(t.params.size()));

    // Before training, in eval mode (running statistics): PyTorch's logits from the engine's layers,
    // from CompiledGraph and from the reference evaluator.
    const std::vector<float> wantLogits = testonnx::readValues<float>(kTrainFixtures + name + ".output.bin");
    {
        std::vector<float> evalInput = x;
        const Tensor& y = model.forward(evalInput.data(), n, false);
        const std::span<const float> got(y.data(), static_cast<size_t>(n * classes));
        expectClose(got, wantLogits, 1e-5f, largest(wantLogits), name + " eval-mode logits of the layers");
        const graph::Graph g = onnx::readOnnx(spec.onnx);
        inference::CompiledGraph compiled(g, device);
        std::vector<float> logits(static_cast<size_t>(n * classes));
        compiled.run(x.data(), n, logits.data());
        expectClose(logits, wantLogits, 1e-5f, largest(wantLogits), name + " CompiledGraph");
        expectClose(graph::evaluateReference(g, x.data(), n), wantLogits, 1e-5f, largest(wantLogits), name + " reference");
    }
    std::vector<float> input = x;  // forward may overwrite its input
    Tensor& logits = model.forward(input.data(), n, true);
    Tensor grad(Tensor::plainDesc({n, classes}), device.engine());
    const LossResult loss = SoftmaxCrossEntropy::compute(logits, labels.data(), &grad);
    EXPECT_NEAR(loss.loss, j["loss"].get<double>(), 1e-5 * std::fabs(j["loss"].get<double>())) << name;
    model.backward(grad);

    OptimizerConfig sgd;
    sgd.kind = OptimizerKind::SGD;
    sgd.learning_rate = j["lr"].get<float>();
    std::unique_ptr<Optimizer> opt = Optimizer::create(sgd, model.paramCount());
    opt->step(model.params(), model.grads(), model.paramCount(), 1);

    size_t fixtureAt = 0;
    for (const nlohmann::json& p : j["params"]) {
        const std::string pname = p["name"].get<std::string>();
        ASSERT_TRUE(at.count(pname)) << name << ": PyTorch's parameter '" << pname << "' is not among the model's";
        const auto [offset, count] = at.at(pname);
        const std::span<const float> want(wantGrads.data() + fixtureAt, count);
        // Relative to the model's largest gradient: a bias before a batch norm has a gradient of 0
        // in exact arithmetic, and both sides give rounding noise of 1e-9 for it.
        expectClose({model.grads() + offset, count}, want, 1e-4f, largest(wantGrads), name + " gradient of " + pname);
        const std::span<const float> after(wantAfter.data() + fixtureAt, count);
        expectClose({model.params() + offset, count}, after, 1e-5f, largest(after), name + " " + pname + " after one SGD step");
        fixtureAt += count;
    }
    EXPECT_EQ(fixtureAt, wantGrads.size());

    // The per-op statistics carry the ONNX node names: every layer with parameters has rows under
    // its node's name ("Conv_0: ...", a bottleneck's "Add_12/conv_a: ...").
    const std::vector<prof::OpRow> rows = device.ops().snapshot();
    ASSERT_EQ(trainable.layer_names.size(), trainable.layers.size());
    for (size_t i = 0; i < trainable.layers.size(); ++i) {
        const LayerKind k = trainable.layers[i].kind;
        if (k != LayerKind::Conv2D && k != LayerKind::Dense && k != LayerKind::Bottleneck) continue;
        const std::string& node = trainable.layer_names[i];
        const bool found = std::any_of(rows.begin(), rows.end(), [&](const prof::OpRow& r) {
            return r.shape.rfind(node + ": ", 0) == 0 || r.shape.rfind(node + "/", 0) == 0;
        });
        EXPECT_TRUE(found) << name << ": no per-op row under node '" << node << "'";
    }
    EXPECT_EQ(j["params"].size(), t.param_names.size()) << name << ": the engine trains parameters PyTorch has not";
}

INSTANTIATE_TEST_SUITE_P(PyTorchExports, OnnxTrainingFixture, ::testing::Values("mlp", "cnn", "tiny_resnet", "fmnist_mlp", "fmnist_cnn"));

TEST(OnnxTraining, TorchvisionBottlenecksBecomeTheEnginesBottleneckLayers) {
    const graph::TrainableLayers t = graph::layersFromGraph(onnx::readOnnx(kTrainFixtures + "tiny_resnet.onnx"));
    std::vector<LayerKind> kinds;
    for (const LayerSpec& s : t.layers) kinds.push_back(s.kind);
    EXPECT_EQ(kinds, (std::vector<LayerKind>{LayerKind::Conv2D, LayerKind::BatchNorm, LayerKind::ReLU, LayerKind::Bottleneck,
                                             LayerKind::Bottleneck, LayerKind::Bottleneck, LayerKind::GlobalAvgPool,
                                             LayerKind::Dense}));
    EXPECT_EQ(t.layers[3].filters, 4);
    EXPECT_EQ(t.layers[5].stride, 2);
    EXPECT_FLOAT_EQ(t.layers[1].epsilon, 1e-5f);   // PyTorch's, not the engine's default
    EXPECT_FLOAT_EQ(t.layers[1].momentum, 0.9f);   // PyTorch's 0.1 in ONNX's convention
}

// graphFromModel then layersFromGraph gives back every preset's layers and the model's own weights.
TEST(OnnxTraining, MappingAModelsGraphBackGivesItsLayersAndWeights) {
    struct Case {
        const char* preset;
        Dims shape;
    };
    for (const Case& c : {Case{"mlp", {1, 28, 28}}, Case{"cnn", {1, 28, 28}}, Case{"resnet_small", {3, 32, 32}}}) {
        CpuDevice device(1);
        const ModelSpec spec = testmodels::preset(c.preset);
        Model model(spec, c.shape, 10, device, 5);
        // Non-trivial running statistics, so that state order matters.
        for (size_t i = 0; i < model.state().size(); ++i) model.state()[i] = 0.5f + 0.001f * static_cast<float>(i);
        const std::span<const float> params(model.params(), static_cast<size_t>(model.paramCount()));
        const graph::Graph g = graph::graphFromModel(spec, c.shape, 10, params, model.state());
        const graph::TrainableLayers t = graph::layersFromGraph(g);
        EXPECT_TRUE(std::equal(t.params.begin(), t.params.end(), params.begin(), params.end())) << c.preset;
        EXPECT_TRUE(std::equal(t.state.begin(), t.state.end(), model.state().begin(), model.state().end())) << c.preset;
        std::vector<LayerSpec> want;
        for (LayerSpec s : spec.layers) {
            if (s.kind == LayerKind::Dropout) continue;  // the identity at inference: not in the graph
            if (s.kind == LayerKind::Dense && s.units == LayerSpec::kUnitsPerClass) s.units = 10;
            if (s.kind == LayerKind::MaxPool2D && s.stride == 0) s.stride = s.kernel;
            want.push_back(s);
        }
        ASSERT_EQ(t.layers.size(), want.size()) << c.preset;
        for (size_t i = 0; i < want.size(); ++i) {
            const LayerSpec &a = t.layers[i], &b = want[i];
            EXPECT_EQ(a.kind, b.kind) << c.preset << " layer " << i;
            if (a.kind == LayerKind::Dense) {
                EXPECT_EQ(a.units, b.units) << c.preset << " layer " << i;
            }
            if (a.kind == LayerKind::Conv2D || a.kind == LayerKind::Bottleneck) {
                EXPECT_EQ(a.filters, b.filters) << c.preset << " layer " << i;
                EXPECT_EQ(a.stride, b.stride) << c.preset << " layer " << i;
            }
            if (a.kind == LayerKind::Conv2D || a.kind == LayerKind::MaxPool2D) {
                EXPECT_EQ(std::tie(a.kernel, a.stride, a.padding), std::tie(b.kernel, b.stride, b.padding))
                    << c.preset << " layer " << i;
            }
            if (a.kind == LayerKind::BatchNorm || a.kind == LayerKind::Bottleneck) {
                EXPECT_EQ(std::tie(a.epsilon, a.momentum), std::tie(b.epsilon, b.momentum)) << c.preset << " layer " << i;
            }
        }
        // And the model those layers make, started from those weights, computes what the original does.
        ModelSpec back{"", t.layers, {}, std::make_shared<ModelWeights>(ModelWeights{t.params, t.state, "test"}), {}};
        Model again(back, c.shape, 10, device, 99);
        testmodels::Batch b = testmodels::randomBatch(model, 4, 3);
        std::vector<float> x1 = b.x, x2 = b.x;
        const Tensor& y1 = model.forward(x1.data(), 4, false);
        const std::vector<float> first(y1.data(), y1.data() + 40);
        const Tensor& y2 = again.forward(x2.data(), 4, false);
        EXPECT_TRUE(std::equal(first.begin(), first.end(), y2.data())) << c.preset;
    }
}

// A classifier that ends in Softmax trains on the logits before it: the loss has its own softmax.
TEST(OnnxTraining, AClosingSoftmaxIsTheLosssOwn) {
    graph::Graph g = onnx::readOnnx(kTrainFixtures + "cnn.onnx");
    const graph::TrainableLayers plain = graph::layersFromGraph(g);
    graph::Node softmax{.name = "probabilities", .kind = graph::OpKind::Softmax, .inputs = {g.output}, .output = "probs"};
    g.nodes.push_back(softmax);
    g.output = "probs";
    const graph::TrainableLayers t = graph::layersFromGraph(g);
    EXPECT_EQ(t.layer_names, plain.layer_names);
    EXPECT_EQ(t.params, plain.params);
    // Anywhere else it has no backward.
    g.nodes.insert(g.nodes.end() - 1, graph::Node{.name = "early", .kind = graph::OpKind::Softmax,
                                                   .inputs = {g.nodes.back().inputs[0]}, .output = "early_out"});
    g.nodes.back().inputs = {"early_out"};
    try {
        (void)graph::layersFromGraph(g);
        FAIL() << "a softmax inside the graph trained";
    } catch (const graph::GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("'early' (Softmax)"), std::string::npos) << e.what();
    }
}

TEST(OnnxTraining, NodesWithoutABackwardAreEachNamed) {
    ModelSpec spec;
    spec.onnx = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/mobilenet_block.onnx";
    try {
        (void)onnx::trainableModel(spec);
        FAIL() << "a MobileNetV2 block has no backward in the engine";
    } catch (const ModelError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("model.onnx " + spec.onnx + ": cannot train it: "), std::string::npos) << m;
        EXPECT_NE(m.find("no backward in the engine"), std::string::npos) << m;
        EXPECT_NE(m.find("(Conv with group 48)"), std::string::npos) << m;  // the depthwise convolution
        EXPECT_NE(m.find("(Clip)"), std::string::npos) << m;
        EXPECT_NE(m.find("(Add outside a ResNet bottleneck)"), std::string::npos) << m;
        EXPECT_NE(m.find("estimate, predict, serve and quantize take it"), std::string::npos) << m;
    }
    // A model stripped to shapes has nothing to start from.
    spec.onnx = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/full/resnet50.onnx";
    try {
        (void)onnx::trainableModel(spec);
        FAIL() << "a weightless graph trained";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("stripped to shapes"), std::string::npos) << e.what();
    }
    // Data of another shape is refused naming both.
    spec.onnx = kTrainFixtures + "cnn.onnx";
    try {
        (void)onnx::trainableModel(spec, {1, 28, 28}, 10);
        FAIL() << "an 8x8 model trained on 28x28 data";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("the model takes examples of 1x8x8 and outputs 10 classes; the data has 1x28x28"),
                  std::string::npos)
            << e.what();
    }
}

// A graph that is not a chain (an op reading a value other than the one before it) is refused
// naming the node; weights of the wrong count never reach a model.
TEST(OnnxTraining, ABranchOutsideABottleneckAndWrongWeightCountsAreRefused) {
    graph::Graph g;
    g.input = "x";
    g.sample_shape = {4};
    g.classes = 2;
    g.initializers["w1"] = {{3, 4}, std::vector<float>(12, 0.1f)};
    g.initializers["w2"] = {{2, 4}, std::vector<float>(8, 0.1f)};
    graph::Node a{.name = "a", .kind = graph::OpKind::Gemm, .inputs = {"x", "w1"}, .output = "h"};
    graph::Node b{.name = "b", .kind = graph::OpKind::Gemm, .inputs = {"x", "w2"}, .output = "y"};  // skips a
    g.nodes = {a, b};
    g.output = "y";
    try {
        (void)graph::layersFromGraph(g);
        FAIL() << "a branch trained";
    } catch (const graph::GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("node 'b' (Gemm) reads 'x', not the output of the node before it ('h')"),
                  std::string::npos)
            << e.what();
    }

    CpuDevice device(1);
    ModelSpec spec = testmodels::custom({testmodels::dense(2)});
    spec.initial = std::make_shared<ModelWeights>(ModelWeights{std::vector<float>(5), {}, "model.onnx m.onnx"});
    try {
        Model m(spec, {4}, 2, device, 1);
        FAIL() << "5 weights started a model of 10";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("model.onnx m.onnx: its weights hold 5 parameters and 0 state values, the "
                                             "model's layers 10 and 0"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace trainbench::engine
