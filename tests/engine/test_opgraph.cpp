// The op graph (ops by shapes, no allocation) against what a real training step registers in the
// per-op statistics, and its footprint against the profiler's count for a built model.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "engine/emulation/opgraph.h"
#include "engine/emulation/footprint.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/strategy/strategy.h"
#include "engine/util/errors.h"
#include "engine/util/rng.h"

namespace trainbench::engine {
namespace {

using Key = std::tuple<std::string, std::string>;  // kind, shape
struct Cost {
    double flops = 0, bytes = 0;
    int64_t calls = 0;
};

std::map<Key, Cost> realStep(const ModelSpec& spec, const Dims& sample, int64_t classes, int64_t batch,
                             const OptimizerConfig& oc) {
    CpuDevice device(1);
    Model model(spec, sample, classes, device, 7);
    auto optimizer = Optimizer::create(oc, model.paramCount());
    SingleStrategy single(model, *optimizer);
    int64_t features = 1;
    for (int64_t d : sample) features *= d;
    std::vector<float> x(static_cast<size_t>(batch * features));
    std::vector<int32_t> y(static_cast<size_t>(batch));
    Rng rng(3);
    for (float& v : x) v = rng.uniform(0.0f, 1.0f);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int32_t>(i % static_cast<size_t>(classes));
    single.step(BatchView{x.data(), y.data(), batch}, 1, 11, {});
    std::map<Key, Cost> out;
    for (const prof::OpRow& r : single.opStats()) {
        if (r.kind == "reorder") continue;  // layouts: this machine's oneDNN, not the model
        out[{r.kind, r.shape}] = {r.flops, r.bytes, r.calls};
    }
    return out;
}

std::map<Key, Cost> described(const OpGraph& g) {
    std::map<Key, Cost> out;
    for (const OpDesc& op : g.ops) {
        Cost& c = out[{op.cost.kind, op.cost.shape}];
        c.flops = op.cost.flops;
        c.bytes = op.cost.bytes;
        c.calls += op.calls;
    }
    return out;
}

void expectSameOps(const char* preset, const Dims& sample, int64_t batch, OptimizerKind kind) {
    ModelSpec spec;
    spec.preset = preset;
    spec.layers = presetLayers(preset);
    OptimizerConfig oc;
    oc.kind = kind;
    const auto real = realStep(spec, sample, 10, batch, oc);
    const auto graph = described(trainingStepGraph(spec, sample, 10, batch, oc));
    ASSERT_FALSE(real.empty());
    EXPECT_EQ(graph.size(), real.size()) << preset;
    for (const auto& [key, cost] : real) {
        SCOPED_TRACE(std::string(preset) + ": " + std::get<0>(key) + " " + std::get<1>(key));
        auto it = graph.find(key);
        ASSERT_NE(it, graph.end()) << "the op graph misses an op a real step runs";
        EXPECT_EQ(it->second.flops, cost.flops);
        EXPECT_EQ(it->second.bytes, cost.bytes);
        EXPECT_EQ(it->second.calls, cost.calls);
    }
}

TEST(OpGraph, MlpStepHasTheOpsARealStepRuns) { expectSameOps("mlp", {1, 28, 28}, 32, OptimizerKind::Adam); }

TEST(OpGraph, CnnStepHasTheOpsARealStepRuns) { expectSameOps("cnn", {1, 28, 28}, 16, OptimizerKind::SGD); }

TEST(OpGraph, ResidualStepHasTheOpsARealStepRuns) {
    // Bottleneck blocks (batch norm, projection and identity shortcuts) and global average pooling.
    expectSameOps("resnet_small", {1, 28, 28}, 8, OptimizerKind::Adam);
}

TEST(OpGraph, ShardedBatchNormIsOneCallPerShard) {
    ModelSpec spec;
    spec.layers = presetLayers("resnet_small");
    CpuDevice device(1);
    Model model(spec, {1, 28, 28}, 10, device, 7);
    model.setStatisticsShards(4);
    // The op graph of a 4-core step has each batch norm once per core, on a quarter of the batch.
    int bn = 0;
    std::vector<OpDesc> ops;
    for (const auto& layer : model.layers()) layer->describeOps(16, true, ops);
    for (const OpDesc& op : ops) {
        if (op.cost.kind.rfind("batch_normalization", 0) != 0) continue;
        ++bn;
        EXPECT_EQ(op.calls, 4) << op.cost.shape;
        const size_t colon = op.cost.shape.find(": ");
        const std::string dims = colon == std::string::npos ? op.cost.shape : op.cost.shape.substr(colon + 2);
        EXPECT_EQ(dims.rfind("data 4x", 0), 0u) << op.cost.shape;
    }
    EXPECT_GT(bn, 0);
}

// ResNet-50 at 224x224 with 1000 classes, from shapes alone: torchvision's 25,557,032 parameters,
// and some 4.1 billion multiply-adds per image forward (He et al. 2016 give 3.8e9 for v1; the
// stride on the 3x3, v1.5, adds about 0.3e9).
TEST(OpGraph, ResNet50ByShapesAlone) {
    ModelSpec spec;
    spec.preset = "resnet50";
    spec.layers = presetLayers("resnet50");
    const OpGraph g = trainingStepGraph(spec, {3, 224, 224}, 1000, 1, OptimizerConfig{});
    EXPECT_EQ(g.param_count, 25557032);
    double macs = 0;
    for (const OpDesc& op : g.ops)
        if (op.part == StepPart::Forward && !op.matrix.empty())
            macs += static_cast<double>(op.matrix.m) * static_cast<double>(op.matrix.n) * static_cast<double>(op.matrix.k);
    EXPECT_GT(macs, 4.0e9);
    EXPECT_LT(macs, 4.2e9);
    // Activations dominate its footprint at a realistic batch.
    const OpGraph b32 = trainingStepGraph(spec, {3, 224, 224}, 1000, 32, OptimizerConfig{});
    EXPECT_GT(b32.activation_bytes, 3 * (b32.params_bytes + b32.grads_bytes + b32.optimizer_bytes));
}

TEST(OpGraph, MatrixShapesMultiplyToTheProductsFlops) {
    ModelSpec spec;
    spec.layers = presetLayers("cnn");
    const OpGraph g = trainingStepGraph(spec, {1, 28, 28}, 10, 64, OptimizerConfig{});
    int matrixOps = 0;
    for (const OpDesc& op : g.ops) {
        if (op.matrix.empty()) continue;
        ++matrixOps;
        // Bias and ReLU post-ops add a few FLOPs per output on top of the 2mnk multiply-adds.
        const double mnk2 = 2.0 * static_cast<double>(op.matrix.m) * static_cast<double>(op.matrix.n) *
                            static_cast<double>(op.matrix.k);
        // Those touch one output-sized matrix (bias gradients: the k x n one) up to twice.
        const double m = static_cast<double>(op.matrix.m), n = static_cast<double>(op.matrix.n),
                     k = static_cast<double>(op.matrix.k);
        EXPECT_GE(op.cost.flops, mnk2) << op.cost.kind << " " << op.cost.shape;
        EXPECT_LE(op.cost.flops - mnk2, 2.0 * std::max({m * n, m * k, n * k})) << op.cost.kind << " " << op.cost.shape;
    }
    EXPECT_GE(matrixOps, 6);  // two convolutions and two dense layers, forward and backward
}

TEST(OpGraph, PartsComeInStepOrderAndEveryLayerWithParametersIsUpdated) {
    ModelSpec spec;
    spec.layers = presetLayers("mlp");
    const OpGraph g = trainingStepGraph(spec, {1, 28, 28}, 10, 8, OptimizerConfig{});
    size_t firstBackward = g.ops.size();
    int updates = 0;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        if (g.ops[i].part != StepPart::Forward && firstBackward == g.ops.size()) firstBackward = i;
        if (i > firstBackward) {
            EXPECT_NE(g.ops[i].part, StepPart::Forward) << "a forward op after backward began";
        }
        if (g.ops[i].part == StepPart::Optimizer) ++updates;
    }
    EXPECT_EQ(updates, 3);  // the mlp preset's three dense layers
    const OpGraph eval = evaluationGraph(spec, {1, 28, 28}, 10, 8);
    for (const OpDesc& op : eval.ops) EXPECT_EQ(op.part, StepPart::Forward);
    EXPECT_EQ(eval.grads_bytes, 0.0);
}

TEST(OpGraph, FootprintMatchesTheBuiltModel) {
    ModelSpec spec;
    spec.layers = presetLayers("cnn");
    OptimizerConfig oc;  // Adam: two state floats per parameter
    const OpGraph g = trainingStepGraph(spec, {1, 28, 28}, 10, 128, oc);
    CpuDevice device(1);
    Model model(spec, {1, 28, 28}, 10, device, 1);
    EXPECT_EQ(g.param_count, model.paramCount());
    EXPECT_EQ(g.params_bytes, 4.0 * static_cast<double>(model.paramCount()));
    EXPECT_EQ(g.grads_bytes, g.params_bytes);
    EXPECT_EQ(g.optimizer_bytes, 2.0 * g.params_bytes);
    EXPECT_EQ(g.activation_bytes, 128.0 * 4.0 * activationFloatsPerExample(model.layers(), model.sampleShape()));
}

TEST(OpGraph, ModelsThatDoNotFitFailAsAModelWould) {
    ModelSpec spec;
    spec.layers = {LayerSpec{LayerKind::Flatten}, LayerSpec{LayerKind::Conv2D, 0, 8}};
    EXPECT_THROW(trainingStepGraph(spec, {1, 28, 28}, 10, 8, OptimizerConfig{}), ModelError);
    spec.layers = presetLayers("mlp");
    EXPECT_THROW(trainingStepGraph(spec, {1, 28, 28}, 10, 0, OptimizerConfig{}), std::invalid_argument);
}

}  // namespace
}  // namespace trainbench::engine
