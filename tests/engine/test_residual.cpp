// The layers of residual networks: global average pooling, padded max pooling (ResNet's stem) and the
// bottleneck block, forward against double references and backward against finite differences; the
// block's sub-ops in the per-op statistics.
#include <gtest/gtest.h>

#include <string>

#include "engine/layers/bottleneck.h"
#include "engine/layers/globalavgpool.h"
#include "engine/layers/maxpool2d.h"
#include "engine/util/errors.h"
#include "tests/engine/normref.h"

namespace trainbench::engine {
namespace {

using namespace testref;

constexpr int kThreads = 1;  // finite differences: thousands of tiny forwards (see test_layers.cpp)

// ---------------------------------------------------------------- GlobalAvgPool

TEST(GlobalAvgPool, MeanPerChannelIntoAPlainVectorAndBackMatchesFiniteDifferences) {
    const int64_t n = 3, c = 5, h = 4, w = 3;
    for (bool blocked : {false, true}) {
        SCOPED_TRACE(blocked ? "blocked" : "plain");
        CpuDevice dev(kThreads);
        GlobalAvgPool layer(dev, {c, h, w});
        EXPECT_EQ(layer.outputShape(), (Dims{c}));
        const Values x = randomValues(n * c * h * w, 1);
        const auto md = blocked ? blocked16({n, c, h, w}) : plain({n, c, h, w});
        Tensor xt = fromVector(x, md, dev);
        Tensor& y = layer.forward(xt, false);
        EXPECT_TRUE(y.desc() == plain({n, c})) << "a plain [N, C] output, ready for a dense layer";
        Doubles want(static_cast<size_t>(n * c), 0.0);
        for (size_t i = 0; i < x.size(); ++i) want[i / static_cast<size_t>(h * w)] += x[i] / static_cast<double>(h * w);
        EXPECT_TRUE(allNear(want, toVector(y, dev), 1e-6, 1e-6));
        // Linear: central differences are exact up to float rounding.
        Values none;
        expectBackwardMatchesFiniteDifferences(layer, dev, x, md, none, none, 2, GradCheck{});
    }
}

TEST(GlobalAvgPool, NeedsAnImage) {
    CpuDevice dev(1);
    EXPECT_THROW(GlobalAvgPool(dev, {64}), ModelError);
}

// ---------------------------------------------------------------- MaxPool2D with padding

struct PaddedPoolCase {
    const char* name;
    int64_t n, c, h, w, size, stride, pad;
    bool blocked;
};

class PaddedMaxPoolTest : public ::testing::TestWithParam<PaddedPoolCase> {};

TEST_P(PaddedMaxPoolTest, PaddingNeverWinsAndBackwardMatchesFiniteDifferences) {
    const PaddedPoolCase& c = GetParam();
    CpuDevice dev(kThreads);
    MaxPool2D layer(dev, {c.c, c.h, c.w}, c.size, c.stride, c.pad);
    const int64_t oh = (c.h + 2 * c.pad - c.size) / c.stride + 1, ow = (c.w + 2 * c.pad - c.size) / c.stride + 1;
    ASSERT_EQ(layer.outputShape(), (Dims{c.c, oh, ow}));
    // All values negative: a padding cell read as 0 would win every border window.
    Values x = distinctValues(c.n * c.c * c.h * c.w, 3, 0.05f);
    for (float& v : x) v -= 0.05f * static_cast<float>(x.size());
    const Dims dims{c.n, c.c, c.h, c.w};
    const auto md = c.blocked ? blocked16(dims) : plain(dims);
    Tensor xt = fromVector(x, md, dev);
    EXPECT_TRUE(allNear(paddedMaxPoolRef(x, c.n, c.c, c.h, c.w, c.size, c.stride, c.pad),
                        toVector(layer.forward(xt, false), dev), 0.0, 0.0));
    // Distinct values 0.05 apart: a step of 0.01 never changes a window's winner.
    Values none;
    expectBackwardMatchesFiniteDifferences(layer, dev, x, md, none, none, 4, GradCheck{});
}

INSTANTIATE_TEST_SUITE_P(Layers, PaddedMaxPoolTest,
                         ::testing::Values(PaddedPoolCase{"resnetStem3x3Stride2Pad1", 2, 3, 8, 8, 3, 2, 1, false},
                                           PaddedPoolCase{"resnetStemBlocked", 2, 3, 8, 8, 3, 2, 1, true},
                                           PaddedPoolCase{"oddSizesBlocked", 1, 17, 7, 5, 3, 2, 1, true},
                                           PaddedPoolCase{"size2Pad1Stride1", 1, 2, 4, 5, 2, 1, 1, false}),
                         CaseName());

TEST(PaddedMaxPool, ResNetStemHalvesTheImageAndTooMuchPaddingIsRefused) {
    CpuDevice dev(1);
    EXPECT_EQ(MaxPool2D(dev, {64, 112, 112}, 3, 2, 1).outputShape(), (Dims{64, 56, 56}));
    try {
        MaxPool2D(dev, {3, 8, 8}, 3, 2, 2);
        ADD_FAILURE() << "padding 2 leaves windows that see no input";
    } catch (const ModelError& e) {
        EXPECT_STREQ(e.what(), "maxpool2d padding 2 must be between 0 and half the window (3)");
    }
}

// ---------------------------------------------------------------- Bottleneck

struct BlockCase {
    const char* name;
    int64_t n, c, h, w, width, stride;
    bool blocked, projection;
};

class BottleneckTest : public ::testing::TestWithParam<BlockCase> {};

int64_t blockParams(int64_t c, int64_t width, bool projection) {
    const int64_t out = 4 * width;
    return c * width + 2 * width + 9 * width * width + 2 * width + width * out + 2 * out +
           (projection ? c * out + 2 * out : 0);
}

Values blockParamValues(Bottleneck& block, uint64_t seed) {
    Values p;
    for (Layer* part : block.parts()) {  // conv weights of order 1/sqrt(fan-in); gamma near 1, beta near 0
        if (std::string(part->kind()) == "conv2d") {
            const Values w = randomValues(part->paramCount(), seed++, -0.6f, 0.6f);
            p.insert(p.end(), w.begin(), w.end());
        } else {
            const int64_t ch = part->paramCount() / 2;
            const Values g = randomValues(ch, seed++, 0.5f, 1.5f), b = randomValues(ch, seed++, -0.3f, 0.3f);
            p.insert(p.end(), g.begin(), g.end());
            p.insert(p.end(), b.begin(), b.end());
        }
    }
    return p;
}

TEST_P(BottleneckTest, ForwardMatchesTheComposedReference) {
    const BlockCase& c = GetParam();
    CpuDevice dev(2);
    const float eps = 1e-3f;
    Bottleneck block(dev, {c.c, c.h, c.w}, c.width, c.stride, 0.99f, eps);
    const int64_t oh = (c.h - 1) / c.stride + 1, ow = (c.w - 1) / c.stride + 1;
    ASSERT_EQ(block.outputShape(), (Dims{4 * c.width, oh, ow}));
    ASSERT_EQ(block.projection(), c.projection);
    ASSERT_EQ(block.paramCount(), blockParams(c.c, c.width, c.projection));
    ASSERT_EQ(block.stateCount(), 2 * (2 * c.width + 4 * c.width + (c.projection ? 4 * c.width : 0)));
    Values params = blockParamValues(block, 1), grads(params.size()), state(static_cast<size_t>(block.stateCount()));
    block.bindParams(params.data(), grads.data());
    block.bindState(state.data());
    const Values x = randomValues(c.n * c.c * c.h * c.w, 2);
    const Dims dims{c.n, c.c, c.h, c.w};
    Tensor xt = fromVector(x, c.blocked ? blocked16(dims) : plain(dims), dev);
    const Doubles want = bottleneckRef(x, c.n, c.c, c.h, c.w, c.width, c.stride, params, eps);
    // Three float convolutions and batch norms deep: relative errors ~1e-6 per stage.
    EXPECT_TRUE(allNear(want, toVector(block.forward(xt, true), dev), 1e-4, 1e-5));
}

// Central differences of the double-precision reference block (which the forward test shows the
// layer computes): with a step of 1e-5 there is no float noise and hardly a ReLU kink inside a step
// (those few are detected by their one-sided slopes and skipped). The layer's float backward through
// three convolutions and batch norms is then within 2e-3 relative, 1e-3 absolute.
TEST_P(BottleneckTest, BackwardMatchesFiniteDifferencesOfTheReference) {
    const BlockCase& c = GetParam();
    CpuDevice dev(2);
    const double eps = 1e-3;
    Bottleneck block(dev, {c.c, c.h, c.w}, c.width, c.stride, 0.99f, static_cast<float>(eps));
    Values params = blockParamValues(block, 5), grads(params.size(), 12345.0f);
    Values state(static_cast<size_t>(block.stateCount()));
    block.bindParams(params.data(), grads.data());
    block.bindState(state.data());
    Values x = randomValues(c.n * c.c * c.h * c.w, 6);
    const Dims dims{c.n, c.c, c.h, c.w};
    const auto md = c.blocked ? blocked16(dims) : plain(dims);
    const Values w = randomValues(c.n * product(block.outputShape()), 7);

    Tensor xt = fromVector(x, md, dev);
    Tensor& y = block.forward(xt, true);
    Tensor gy = fromVector(w, y.desc(), dev);
    Tensor* gx = block.backward(gy);
    dev.stream().wait();
    ASSERT_NE(gx, nullptr);
    EXPECT_TRUE(gx->desc() == md) << "the input gradient must come back in the input's layout";

    auto loss = [&] {
        const Doubles out = bottleneckRef(x, c.n, c.c, c.h, c.w, c.width, c.stride, params, eps);
        double sum = 0.0;
        for (size_t i = 0; i < out.size(); ++i) sum += out[i] * w[i];
        return sum;
    };
    const size_t maxSkipped = (x.size() + params.size()) / 100;
    EXPECT_TRUE(gradNear(centralDiffs(x, 1e-5f, loss, 1e-3), toVector(*gx, dev), 2e-3, 1e-3, maxSkipped))
        << "input gradient";
    EXPECT_TRUE(gradNear(centralDiffs(params, 1e-5f, loss, 1e-3), grads, 2e-3, 1e-3, maxSkipped))
        << "parameter gradients";
}

INSTANTIATE_TEST_SUITE_P(
    Layers, BottleneckTest,
    ::testing::Values(BlockCase{"identityShortcutBlocked", 2, 8, 5, 5, 2, 1, true, false},
                      BlockCase{"identityShortcutPlain", 2, 8, 4, 5, 2, 1, false, false},
                      BlockCase{"projectionForChannels", 2, 4, 5, 4, 2, 1, true, true},
                      BlockCase{"projectionStride2", 2, 8, 5, 6, 2, 2, true, true},
                      BlockCase{"projectionStride2Plain", 2, 3, 6, 5, 2, 2, false, true}),
    CaseName());

// Blocks in a row, as in every ResNet stage: an identity block, then a projection block with stride
// 2, each taking the other's tensors (outputs forward, input gradients backward); checked as above.
TEST(Bottleneck, BlocksInARowMatchFiniteDifferencesOfTheReference) {
    CpuDevice dev(1);
    const int64_t n = 2, c = 8, h = 5, w = 5;
    const double eps = 1e-3;
    Bottleneck first(dev, {c, h, w}, 2, 1, 0.99f, static_cast<float>(eps));
    Bottleneck second(dev, first.outputShape(), 2, 2, 0.99f, static_cast<float>(eps));
    ASSERT_FALSE(first.projection());
    ASSERT_TRUE(second.projection());
    Values params = blockParamValues(first, 31);
    const Values more = blockParamValues(second, 41);
    const auto split = static_cast<std::ptrdiff_t>(params.size());
    params.insert(params.end(), more.begin(), more.end());
    Values grads(params.size(), 12345.0f), state(static_cast<size_t>(first.stateCount() + second.stateCount()));
    first.bindParams(params.data(), grads.data());
    second.bindParams(params.data() + split, grads.data() + split);
    first.bindState(state.data());
    second.bindState(state.data() + first.stateCount());
    Values x = randomValues(n * c * h * w, 32);
    const Values wts = randomValues(n * product(second.outputShape()), 33);

    Tensor xt = fromVector(x, blocked16({n, c, h, w}), dev);
    Tensor& y = second.forward(first.forward(xt, true), true);
    Tensor gy = fromVector(wts, y.desc(), dev);
    Tensor* gx = first.backward(*second.backward(gy));
    dev.stream().wait();
    ASSERT_NE(gx, nullptr);

    auto loss = [&] {
        const Values p1(params.begin(), params.begin() + split), p2(params.begin() + split, params.end());
        const Doubles mid = bottleneckRef(x, n, c, h, w, 2, 1, p1, eps);
        const Doubles out = bottleneckRef(mid, n, c, h, w, 2, 2, p2, eps);
        double sum = 0.0;
        for (size_t i = 0; i < out.size(); ++i) sum += out[i] * wts[i];
        return sum;
    };
    const size_t maxSkipped = (x.size() + params.size()) / 100;
    EXPECT_TRUE(gradNear(centralDiffs(x, 1e-5f, loss, 1e-3), toVector(*gx, dev), 2e-3, 1e-3, maxSkipped))
        << "input gradient";
    EXPECT_TRUE(gradNear(centralDiffs(params, 1e-5f, loss, 1e-3), grads, 2e-3, 1e-3, maxSkipped))
        << "parameter gradients of both blocks";
}

TEST(Bottleneck, FirstLayerGivesNoInputGradientButAllParameterGradients) {
    CpuDevice dev(1);
    Bottleneck with(dev, {4, 5, 5}, 2, 2, 0.99f, 1e-3f), without(dev, {4, 5, 5}, 2, 2, 0.99f, 1e-3f);
    without.setNeedsInputGrad(false);
    Values params = blockParamValues(with, 11), g1(params.size()), g2(params.size(), 12345.0f);
    Values s1(static_cast<size_t>(with.stateCount())), s2(s1.size());
    with.bindParams(params.data(), g1.data());
    without.bindParams(params.data(), g2.data());
    with.bindState(s1.data());
    without.bindState(s2.data());
    const Values x = randomValues(2 * 4 * 25, 12);
    Tensor x1 = fromVector(x, plain({2, 4, 5, 5}), dev), x2 = fromVector(x, plain({2, 4, 5, 5}), dev);
    Tensor& y1 = with.forward(x1, true);
    Tensor& y2 = without.forward(x2, true);
    const Values w = randomValues(y1.elements(), 13);
    Tensor gy1 = fromVector(w, y1.desc(), dev), gy2 = fromVector(w, y2.desc(), dev);
    EXPECT_NE(with.backward(gy1), nullptr);
    EXPECT_EQ(without.backward(gy2), nullptr);
    dev.stream().wait();
    EXPECT_TRUE(allNear(g1, g2, 1e-6, 1e-6));
}

TEST(Bottleneck, SubOpsAreRegisteredUnderTheBlocksPath) {
    CpuDevice dev(1);
    Bottleneck block(dev, {4, 4, 4}, 2, 2, 0.99f, 1e-3f);
    block.setOpPath("bottleneck_3");
    Values params = blockParamValues(block, 21), grads(params.size()), state(static_cast<size_t>(block.stateCount()));
    block.bindParams(params.data(), grads.data());
    block.bindState(state.data());
    Tensor x = fromVector(randomValues(2 * 64, 22), plain({2, 4, 4, 4}), dev);
    Tensor& y = block.forward(x, true);
    Tensor gy = fromVector(randomValues(y.elements(), 23), y.desc(), dev);
    block.backward(gy);
    dev.stream().wait();
    auto has = [&](const std::string& kind, const std::string& shapeStart) {
        for (const prof::OpRow& r : dev.ops().snapshot())
            if (r.kind == kind && r.shape.rfind(shapeStart, 0) == 0) return r.calls == 1;
        return false;
    };
    for (const char* conv : {"conv_a", "conv_b", "conv_c", "conv_shortcut"}) {
        EXPECT_TRUE(has("convolution_forward", std::string("bottleneck_3/") + conv + ": src 2x")) << conv;
        EXPECT_TRUE(has("convolution_backward_weights", std::string("bottleneck_3/") + conv + ": ")) << conv;
    }
    EXPECT_TRUE(has("convolution_backward_data", "bottleneck_3/conv_b: src 2x2x4x4, weights 2x2x3x3, dst 2x2x2x2"));
    for (const char* bn : {"bn_a", "bn_b", "bn_c", "bn_shortcut"}) {
        EXPECT_TRUE(has("batch_normalization_forward_training", std::string("bottleneck_3/") + bn + ": data 2x")) << bn;
        EXPECT_TRUE(has("batch_normalization_backward", std::string("bottleneck_3/") + bn + ": data 2x")) << bn;
    }
    EXPECT_TRUE(has("binary_add", "bottleneck_3/add: 2x8x2x2, relu"));
    EXPECT_TRUE(has("eltwise_relu_backward", "bottleneck_3/relu: 2x8x2x2"));
    EXPECT_TRUE(has("binary_add", "bottleneck_3/add_backward: 2x4x4x4"));
}

TEST(Bottleneck, NeedsAnImage) {
    CpuDevice dev(1);
    EXPECT_THROW(Bottleneck(dev, {784}, 16, 1, 0.99f, 1e-3f), ModelError);
}

}  // namespace
}  // namespace trainbench::engine
