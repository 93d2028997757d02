// A graph's op description (engine/emulation/graphops.h) against the layers' own (engine/emulation/
// opgraph.h): the graph of each preset, as graphFromModel writes it (separate ReLU nodes, a
// bottleneck's branches and its Add as nodes), describes the same ops with the same FLOPs and bytes
// as the preset's layer stack, for a training step and for inference; so an imported model is
// timed exactly like the preset it equals. Grouped convolutions count one group's channels.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "engine/emulation/opgraph.h"
#include "engine/graph/graphfrommodel.h"
#include "engine/emulation/graphops.h"
#include "engine/layers/opcosts.h"
#include "engine/model/layerstack.h"
#include "engine/optim/optimizer.h"

namespace trainbench::engine {
namespace {

// An op as the timing sees it, without its names.
using OpKey = std::tuple<int, std::string, double, double, int64_t, int64_t, int64_t, int64_t>;

std::vector<OpKey> keysOf(const OpGraph& g, bool withUpdates) {
    std::vector<OpKey> keys;
    for (const OpDesc& op : g.ops)
        if (withUpdates || op.part != StepPart::Optimizer)
            keys.emplace_back(static_cast<int>(op.part), op.cost.kind, op.cost.flops, op.cost.bytes, op.calls, op.matrix.m,
                              op.matrix.n, op.matrix.k);
    std::sort(keys.begin(), keys.end());
    return keys;
}

double updateFlops(const OpGraph& g) {
    double flops = 0;
    for (const OpDesc& op : g.ops)
        if (op.part == StepPart::Optimizer) flops += op.cost.flops;
    return flops;
}

graph::Graph presetGraph(const ModelSpec& spec, const Dims& sample, int64_t classes) {
    CpuDevice dev(1);
    const LayerStack stack = buildLayerStack(spec, sample, classes, dev);
    const std::vector<float> params(static_cast<size_t>(stack.paramCount), 0.01f);
    const std::vector<float> state(static_cast<size_t>(stack.stateCount), 1.0f);
    return graph::graphFromModel(spec, sample, classes, params, state);
}

struct PresetCase {
    const char* preset;
    Dims sample;
    int64_t classes;
};

class GraphOps : public ::testing::TestWithParam<PresetCase> {};

TEST_P(GraphOps, ThePresetsGraphDescribesTheLayersOpsWithTheirFlopsAndBytes) {
    const PresetCase& c = GetParam();
    ModelSpec spec;
    spec.preset = c.preset;
    spec.layers = presetLayers(c.preset);
    const graph::Graph g = presetGraph(spec, c.sample, c.classes);
    const OptimizerConfig adam;  // Adam: two state floats per parameter
    for (int64_t batch : {1, 32}) {
        const OpGraph layers = trainingStepGraph(spec, c.sample, c.classes, batch, adam);
        const OpGraph fromGraph = trainingOpGraph(g, batch, adam);
        // Forward and backward op for op; the updates are per node here, per layer there (a
        // bottleneck's seven parameterised parts are one layer): the same work in total.
        EXPECT_EQ(keysOf(fromGraph, false), keysOf(layers, false)) << c.preset << " batch " << batch;
        EXPECT_DOUBLE_EQ(updateFlops(fromGraph), updateFlops(layers)) << c.preset;
        EXPECT_EQ(fromGraph.param_count, layers.param_count);
        EXPECT_DOUBLE_EQ(fromGraph.params_bytes, layers.params_bytes);
        EXPECT_DOUBLE_EQ(fromGraph.grads_bytes, layers.grads_bytes);
        EXPECT_DOUBLE_EQ(fromGraph.optimizer_bytes, layers.optimizer_bytes);
        EXPECT_EQ(keysOf(inferenceOpGraph(g, batch), true), keysOf(evaluationGraph(spec, c.sample, c.classes, batch), true))
            << c.preset << " inference, batch " << batch;
    }
}

INSTANTIATE_TEST_SUITE_P(Presets, GraphOps,
                         ::testing::Values(PresetCase{"mlp", {1, 28, 28}, 10}, PresetCase{"cnn", {1, 28, 28}, 10},
                                           PresetCase{"resnet_small", {1, 28, 28}, 10},
                                           PresetCase{"resnet50", {3, 64, 64}, 100}),
                         [](const auto& p) { return std::string(p.param.preset); });

// A depthwise convolution does channels x kernel^2 multiply-adds per output pixel, not channels^2 x
// kernel^2: the group divides the work and the weights.
TEST(GraphOpsGroups, ADepthwiseConvolutionCountsOneChannelPerFilter) {
    graph::Graph g;
    g.input = "x";
    g.sample_shape = {8, 6, 6};
    g.output = "fc";
    g.classes = 2;
    graph::Node dw{"dw", graph::OpKind::Conv, {"x", "dw.w"}, "dw"};
    dw.kernel = 3;
    dw.pad = 1;
    dw.group = 8;
    g.nodes = {dw, graph::Node{"flat", graph::OpKind::Flatten, {"dw"}, "flat"},
               graph::Node{"fc", graph::OpKind::Gemm, {"flat", "fc.w"}, "fc"}};
    g.initializers["dw.w"] = {{8, 1, 3, 3}, std::vector<float>(72, 0.1f)};
    g.initializers["fc.w"] = {{2, 288}, std::vector<float>(576, 0.1f)};
    const OpGraph ops = inferenceOpGraph(g, 4);
    ASSERT_EQ(ops.ops.size(), 2u);
    EXPECT_EQ(ops.ops[0].cost.kind, "convolution_forward");
    EXPECT_DOUBLE_EQ(ops.ops[0].cost.flops, 2.0 * 4 * 8 * 36 * 9);  // 2 x N x filters x pixels x (1 channel x 3 x 3)
    EXPECT_DOUBLE_EQ(ops.ops[0].cost.bytes, 4.0 * (4 * 8 * 36 + 72 + 4 * 8 * 36));
    EXPECT_EQ(ops.param_count, 72 + 576);
}

}  // namespace
}  // namespace trainbench::engine
