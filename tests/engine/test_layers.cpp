// Layers: forward against naive double references, backward against central finite differences of
// L = sum(w * y), in plain and blocked layouts, with plans reused across batch sizes.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "engine/layers/conv2d.h"
#include "engine/layers/dense.h"
#include "engine/layers/dropout.h"
#include "engine/layers/flatten.h"
#include "engine/layers/maxpool2d.h"
#include "engine/layers/maxpoolkernels.h"
#include "engine/layers/relu.h"
#include "tests/engine/normref.h"
#include "tests/engine/reference.h"

namespace trainbench::engine {
namespace {

using namespace testref;

// Float forward passes, so finite differences carry ~1e-4 of rounding noise; every layer here is
// piecewise linear and the inputs keep clear of the kinks, so a large step costs no accuracy.
constexpr float kStep = 1e-2f;
constexpr double kGradRtol = 1e-2, kGradAtol = 1e-3;
constexpr double kFwdRtol = 1e-5, kFwdAtol = 1e-5;
constexpr float kStale = 12345.0f;  // pre-filled into gradient buffers: backward must overwrite it
// Finite differences run thousands of tiny forwards; OpenMP barriers stall them when the two cores are
// busy, so they run on one thread. The two-thread kernels are checked by the reference tests below.
constexpr int kFiniteDifferenceThreads = 1;

// Checks layer.backward at input x (given plain, fed in layout inDesc) against finite differences of
// sum(w * forward(x)) w.r.t. x and the bound parameters (normref.h), at this file's tolerances.
void expectGradientsMatchFiniteDifferences(Layer& layer, CpuDevice& dev, Values x, const dnnl::memory::desc& inDesc,
                                           Values& params, Values& grads, uint64_t seed) {
    GradCheck check;
    check.step = kStep;
    check.rtol = kGradRtol;
    check.atol = kGradAtol;
    expectBackwardMatchesFiniteDifferences(layer, dev, std::move(x), inDesc, params, grads, seed, check);
}

// ---------------------------------------------------------------- Dense

struct DenseCase {
    const char* name;
    Dims sample;
    int64_t units;
    bool bias, blockedInput;
};

class DenseTest : public ::testing::TestWithParam<DenseCase> {};

TEST_P(DenseTest, ForwardMatchesReferenceAndBackwardMatchesFiniteDifferences) {
    const DenseCase& c = GetParam();
    CpuDevice dev(kFiniteDifferenceThreads);
    const int64_t n = 3, in = product(c.sample);
    Dense layer(dev, c.sample, c.units, c.bias);
    ASSERT_EQ(layer.paramCount(), c.units * in + (c.bias ? c.units : 0));
    Values params = randomValues(layer.paramCount(), 1), grads(params.size());
    layer.bindParams(params.data(), grads.data());
    const Values W(params.begin(), params.begin() + c.units * in);
    const Values b = c.bias ? Values(params.begin() + c.units * in, params.end()) : Values{};

    const Values x = randomValues(n * in, 2);
    const auto inDesc = c.blockedInput ? blocked16(withBatch(n, c.sample)) : plain(withBatch(n, c.sample));
    Tensor xt = fromVector(x, inDesc, dev);
    Tensor& y = layer.forward(xt, false);
    EXPECT_EQ(y.dims(), (Dims{n, c.units}));
    EXPECT_TRUE(allNear(denseRef(x, W, b, n, in, c.units), toVector(y, dev), kFwdRtol, kFwdAtol));

    expectGradientsMatchFiniteDifferences(layer, dev, x, inDesc, params, grads, 3);
}

INSTANTIATE_TEST_SUITE_P(
    Layers, DenseTest,
    ::testing::Values(DenseCase{"bias", {5}, 4, true, false}, DenseCase{"noBias", {5}, 4, false, false},
                      DenseCase{"nchwInput", {2, 3, 2}, 4, true, false},
                      DenseCase{"blockedNchwInput", {3, 2, 3}, 4, true, true}),
    CaseName());

// ---------------------------------------------------------------- Conv2D

struct ConvCase {
    const char* name;
    ConvShape s;
    bool bias, blockedInput;
};

class Conv2DTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2DTest, ForwardMatchesReferenceAndBackwardMatchesFiniteDifferences) {
    const ConvCase& c = GetParam();
    const ConvShape& s = c.s;
    CpuDevice dev(kFiniteDifferenceThreads);
    Conv2D layer(dev, {s.c, s.h, s.w}, s.f, s.k, s.stride, s.pad, c.bias);
    ASSERT_EQ(layer.outputShape(), (Dims{s.f, s.oh(), s.ow()}));
    const int64_t nw = product(s.weightDims());
    ASSERT_EQ(layer.paramCount(), nw + (c.bias ? s.f : 0));
    Values params = randomValues(layer.paramCount(), 11), grads(params.size());
    layer.bindParams(params.data(), grads.data());
    const Values W(params.begin(), params.begin() + nw);
    const Values b = c.bias ? Values(params.begin() + nw, params.end()) : Values{};

    const Values x = randomValues(product(s.inDims()), 12);
    const auto inDesc = c.blockedInput ? blocked16(s.inDims()) : plain(s.inDims());
    Tensor xt = fromVector(x, inDesc, dev);
    Tensor& y = layer.forward(xt, false);
    EXPECT_EQ(y.dims(), s.outDims());
    EXPECT_TRUE(allNear(convRef(s, x, W, b), toVector(y, dev), kFwdRtol, kFwdAtol));

    expectGradientsMatchFiniteDifferences(layer, dev, x, inDesc, params, grads, 13);
}

INSTANTIATE_TEST_SUITE_P(
    Layers, Conv2DTest,
    ::testing::Values(ConvCase{"k3s1p0c1", {2, 1, 5, 5, 4, 3, 1, 0}, true, false},
                      ConvCase{"k3s2p1c3", {2, 3, 6, 7, 4, 3, 2, 1}, true, false},
                      ConvCase{"k2s1p1c3NoBias", {2, 3, 5, 5, 4, 2, 1, 1}, false, false},
                      ConvCase{"k2s2p0c1", {2, 1, 6, 7, 4, 2, 2, 0}, true, false},
                      ConvCase{"k3s2p0c3NoBias", {2, 3, 7, 6, 4, 3, 2, 0}, false, false},
                      ConvCase{"k3s1p1c3BlockedInput", {2, 3, 6, 7, 4, 3, 1, 1}, true, true}),
    CaseName());

// A slice of 8 input channels into 64 filters (tensor parallelism's row split of W2's second
// convolution across 4 devices), its input in the layout a pooling leaves it: every primitive is a
// real kernel, not oneDNN's reference one (1.3 s a call for the input's gradient instead of ~1 ms),
// and the gradients still match finite differences.
TEST(Conv2D, ANarrowInputGetsRealKernelsForEveryPass) {
    const ConvShape s{2, 8, 13, 13, 64, 3, 1, 0};
    for (bool blocked : {false, true}) {
        CpuDevice dev(1);
        Conv2D layer(dev, {s.c, s.h, s.w}, s.f, s.k, s.stride, s.pad, true);
        Values params = randomValues(layer.paramCount(), 21), grads(params.size());
        layer.bindParams(params.data(), grads.data());
        const Values x = randomValues(product(s.inDims()), 22);
        const auto inDesc = blocked ? blocked16(s.inDims()) : plain(s.inDims());
        Tensor xt = fromVector(x, inDesc, dev);
        Tensor& y = layer.forward(xt, true);
        Tensor g = fromVector(randomValues(product(s.outDims()), 23), y.desc(), dev);
        ASSERT_NE(layer.backward(g), nullptr);
        const std::vector<std::string> kernels = layer.kernels();
        ASSERT_EQ(kernels.size(), 3u);
        for (const std::string& k : kernels) EXPECT_NE(k.rfind("ref", 0), 0u) << k << (blocked ? " (blocked input)" : "");
        expectGradientsMatchFiniteDifferences(layer, dev, x, inDesc, params, grads, 24);
    }
}

// ---------------------------------------------------------------- MaxPool2D

struct PoolCase {
    const char* name;
    int64_t n, c, h, w, size, stride;
    bool blockedInput;
};

class MaxPool2DTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(MaxPool2DTest, ForwardMatchesReferenceAndBackwardMatchesFiniteDifferences) {
    const PoolCase& c = GetParam();
    CpuDevice dev(kFiniteDifferenceThreads);
    MaxPool2D layer(dev, {c.c, c.h, c.w}, c.size, c.stride);
    const int64_t oh = (c.h - c.size) / c.stride + 1, ow = (c.w - c.size) / c.stride + 1;
    ASSERT_EQ(layer.outputShape(), (Dims{c.c, oh, ow}));
    // Distinct values 0.05 apart: a step of 0.01 never changes which element wins a window.
    const Values x = distinctValues(c.n * c.c * c.h * c.w, 21, 0.05f);
    const Dims dims{c.n, c.c, c.h, c.w};
    const auto inDesc = c.blockedInput ? blocked16(dims) : plain(dims);
    Tensor xt = fromVector(x, inDesc, dev);
    Tensor& y = layer.forward(xt, false);
    EXPECT_TRUE(allNear(maxPoolRef(x, c.n, c.c, c.h, c.w, c.size, c.stride), toVector(y, dev), 0.0, 0.0));

    Values none;
    expectGradientsMatchFiniteDifferences(layer, dev, x, inDesc, none, none, 22);
}

INSTANTIATE_TEST_SUITE_P(Layers, MaxPool2DTest,
                         ::testing::Values(PoolCase{"size2stride2", 2, 3, 6, 6, 2, 2, false},
                                           PoolCase{"size3stride1", 2, 3, 5, 7, 3, 1, false},
                                           PoolCase{"size2stride2OddSizes", 2, 2, 7, 5, 2, 2, false},
                                           PoolCase{"size3stride2OddSizes", 1, 4, 7, 7, 3, 2, false},
                                           PoolCase{"size2stride2Blocked", 2, 3, 6, 7, 2, 2, true},
                                           // The blocked layout runs trainbench's own kernels.
                                           PoolCase{"size3stride1BlockedOverlapping", 2, 3, 5, 7, 3, 1, true},
                                           PoolCase{"size2stride2BlockedOddSizes", 2, 2, 7, 5, 2, 2, true},
                                           PoolCase{"size3stride2BlockedOddSizes", 1, 4, 7, 7, 3, 2, true},
                                           PoolCase{"size2stride2Blocked17Channels", 1, 17, 4, 6, 2, 2, true},
                                           PoolCase{"size2stride1Blocked32Channels", 2, 32, 5, 5, 2, 1, true}),
                         CaseName());

// A ReLU fused into pooling: max(0, window max), and no gradient where that is 0.
class MaxPool2DReluTest : public ::testing::TestWithParam<bool> {};

TEST_P(MaxPool2DReluTest, FusedReluMatchesReluOfTheMaxAndItsGradient) {
    const bool blocked = GetParam();
    CpuDevice dev(kFiniteDifferenceThreads);
    const int64_t n = 2, c = 5, h = 6, w = 7;
    MaxPool2D layer(dev, {c, h, w}, 2, 2);
    ASSERT_TRUE(layer.fuseReLU());
    // Distinct values 0.05 apart shifted by half a gap: no ties, and none on ReLU's kink at 0.
    Values x = distinctValues(n * c * h * w, 23, 0.05f);
    for (float& v : x) v += 0.025f;
    const Dims dims{n, c, h, w};
    const auto inDesc = blocked ? blocked16(dims) : plain(dims);
    Tensor xt = fromVector(x, inDesc, dev);
    Doubles want = maxPoolRef(x, n, c, h, w, 2, 2);
    int64_t zeros = 0;
    for (double& v : want) {
        if (v <= 0.0) ++zeros;
        v = std::max(v, 0.0);
    }
    ASSERT_GT(zeros, 0) << "the data must exercise windows whose max is negative";
    EXPECT_TRUE(allNear(want, toVector(layer.forward(xt, false), dev), 0.0, 0.0));
    Values none;
    expectGradientsMatchFiniteDifferences(layer, dev, x, inDesc, none, none, 24);
}

// The same checks through the portable loops that CPUs without AVX-512 run.
TEST(MaxPool2D, PortableKernelsMatchTheReferenceToo) {
    kernels::usePortablePoolingForTesting(true);
    for (const PoolCase& c : {PoolCase{"a", 2, 3, 5, 7, 3, 1, true}, PoolCase{"b", 2, 2, 7, 5, 2, 2, true},
                              PoolCase{"c", 1, 17, 4, 6, 2, 2, true}}) {
        CpuDevice dev(kFiniteDifferenceThreads);
        MaxPool2D layer(dev, {c.c, c.h, c.w}, c.size, c.stride);
        const Values x = distinctValues(c.n * c.c * c.h * c.w, 21, 0.05f);
        const auto inDesc = blocked16({c.n, c.c, c.h, c.w});
        Tensor xt = fromVector(x, inDesc, dev);
        EXPECT_TRUE(allNear(maxPoolRef(x, c.n, c.c, c.h, c.w, c.size, c.stride), toVector(layer.forward(xt, false), dev),
                            0.0, 0.0));
        Values none;
        expectGradientsMatchFiniteDifferences(layer, dev, x, inDesc, none, none, 22);
    }
    kernels::usePortablePoolingForTesting(false);
}

INSTANTIATE_TEST_SUITE_P(Layers, MaxPool2DReluTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Blocked" : "Plain"; });

TEST(MaxPool2D, StrideZeroMeansStrideEqualsSize) {
    CpuDevice dev(1);
    EXPECT_EQ(MaxPool2D(dev, {2, 6, 9}, 3, 0).outputShape(), (Dims{2, 2, 3}));
}

// ---------------------------------------------------------------- ReLU

TEST(ReLU, ForwardInPlaceAndBackwardMatchesFiniteDifferences) {
    CpuDevice dev(kFiniteDifferenceThreads);
    for (bool blocked : {false, true}) {
        SCOPED_TRACE(blocked ? "blocked nChw16c" : "plain");
        const Dims sample{3, 4, 5};
        ReLU layer(dev, sample);
        EXPECT_EQ(layer.outputShape(), sample);
        const Values x = awayFromZero(2 * 60, 31, 0.1f);  // |x| >= 0.1: a step of 0.01 never crosses 0
        const auto inDesc = blocked ? blocked16(withBatch(2, sample)) : plain(withBatch(2, sample));
        Tensor xt = fromVector(x, inDesc, dev);
        Tensor& y = layer.forward(xt, false);
        EXPECT_EQ(&y, &xt) << "ReLU works in place";
        Doubles want;
        for (float v : x) want.push_back(v > 0 ? v : 0.0);
        EXPECT_TRUE(allNear(want, toVector(y, dev), 0.0, 0.0));

        Values none;
        expectGradientsMatchFiniteDifferences(layer, dev, x, inDesc, none, none, 32);
    }
}

// ---------------------------------------------------------------- Flatten

TEST(Flatten, PlainInputIsAViewAndBlockedInputIsReorderedToChannelMajor) {
    CpuDevice dev(2);
    const Dims sample{3, 4, 5};
    for (bool blocked : {false, true}) {
        SCOPED_TRACE(blocked ? "blocked nChw16c" : "plain");
        Flatten layer(dev, sample);
        EXPECT_EQ(layer.outputShape(), (Dims{60}));
        const Values x = randomValues(2 * 60, 41);
        const auto inDesc = blocked ? blocked16(withBatch(2, sample)) : plain(withBatch(2, sample));
        Tensor xt = fromVector(x, inDesc, dev);
        Tensor& y = layer.forward(xt, true);
        EXPECT_TRUE(y.desc() == plain({2, 60}));
        if (!blocked) {
            EXPECT_EQ(y.data(), xt.data()) << "flattening a plain tensor should not copy";
        }
        EXPECT_TRUE(allNear(x, toVector(y, dev), 0.0, 0.0));  // PyTorch's (c, h, w) order

        const Values g = randomValues(2 * 60, 42);
        Tensor gy = fromVector(g, y.desc(), dev);
        Tensor* gx = layer.backward(gy);
        ASSERT_NE(gx, nullptr);
        EXPECT_TRUE(gx->desc() == inDesc);
        EXPECT_TRUE(allNear(g, toVector(*gx, dev), 0.0, 0.0));
    }
}

// Flatten after a real convolution (whose output layout oneDNN picks), then back through the conv.
TEST(Flatten, AfterConv2DForwardAndBackwardMatchReference) {
    CpuDevice dev(2);
    const ConvShape s{2, 3, 6, 6, 4, 3, 1, 1};
    Conv2D conv(dev, {s.c, s.h, s.w}, s.f, s.k, s.stride, s.pad, true);
    Flatten flat(dev, conv.outputShape());
    Values params = randomValues(conv.paramCount(), 51), grads(params.size(), kStale);
    conv.bindParams(params.data(), grads.data());
    const int64_t nw = product(s.weightDims());
    const Values W(params.begin(), params.begin() + nw), b(params.begin() + nw, params.end());
    const Values x = randomValues(product(s.inDims()), 52);

    Tensor xt = fromVector(x, plain(s.inDims()), dev);
    Tensor& y = flat.forward(conv.forward(xt, true), true);
    const int64_t features = s.f * s.oh() * s.ow();
    EXPECT_EQ(y.dims(), (Dims{s.n, features}));
    EXPECT_TRUE(allNear(convRef(s, x, W, b), toVector(y, dev), kFwdRtol, kFwdAtol));

    const Values g = randomValues(s.n * features, 53);
    Tensor gy = fromVector(g, y.desc(), dev);
    Tensor* gx = conv.backward(*flat.backward(gy));
    dev.stream().wait();
    ASSERT_NE(gx, nullptr);
    const ConvGrads want = convBackwardRef(s, x, W, g);
    EXPECT_TRUE(allNear(want.dx, toVector(*gx, dev), 1e-4, 1e-4)) << "input gradient";
    EXPECT_TRUE(allNear(want.dw, Values(grads.begin(), grads.begin() + nw), 1e-4, 1e-4)) << "weight gradient";
    EXPECT_TRUE(allNear(want.db, Values(grads.begin() + nw, grads.end()), 1e-4, 1e-4)) << "bias gradient";
}

// ---------------------------------------------------------------- Dropout

TEST(Dropout, TrainingZeroesAboutRateAndScalesSurvivors) {
    CpuDevice dev(1);
    const int64_t n = 100, features = 1000;
    const float rate = 0.3f;
    Dropout layer(dev, {features}, rate);
    layer.setStepSeed(77);
    const Values x = randomValues(n * features, 61, 0.5f, 1.5f);  // never 0, so a 0 output means dropped
    Tensor xt = fromVector(x, plain({n, features}), dev);
    Tensor& y = layer.forward(xt, true);
    EXPECT_EQ(&y, &xt) << "dropout works in place";
    int64_t dropped = 0, badValues = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        if (y.data()[i] == 0.0f) ++dropped;
        else if (std::abs(y.data()[i] - x[i] / (1.0f - rate)) > 1e-6f * std::abs(x[i])) ++badValues;
    }
    EXPECT_EQ(badValues, 0) << "survivors must be scaled by 1/(1-rate)";
    // 100000 Bernoulli(0.3) draws: the standard deviation of the fraction is 0.0014.
    EXPECT_NEAR(static_cast<double>(dropped) / static_cast<double>(x.size()), rate, 0.01);
}

TEST(Dropout, SameSeedSameMaskAndBackwardAppliesIt) {
    CpuDevice dev(1);
    const Dims sample{2, 5, 5};
    auto maskFor = [&](Dropout& layer, uint64_t seed) {
        layer.setStepSeed(seed);
        Tensor ones = fromVector(Values(4 * 50, 1.0f), plain(withBatch(4, sample)), dev);
        Tensor& y = layer.forward(ones, true);
        return Values(y.data(), y.data() + 200);
    };
    Dropout a(dev, sample, 0.5f), b(dev, sample, 0.5f);
    const Values m1 = maskFor(a, 5);
    EXPECT_EQ(maskFor(b, 5), m1) << "same seed, same mask (even in another layer object)";
    EXPECT_NE(maskFor(b, 6), m1) << "another seed, another mask";

    // Backward multiplies by the mask of the last training forward (here: a's, seed 5).
    const Values x = randomValues(200, 62);
    Tensor xt = fromVector(x, plain(withBatch(4, sample)), dev);
    a.setStepSeed(5);
    a.forward(xt, true);
    const Values g = randomValues(200, 63);
    Tensor gy = fromVector(g, plain(withBatch(4, sample)), dev);
    Tensor* gx = a.backward(gy);
    ASSERT_NE(gx, nullptr);
    Doubles want;
    for (size_t i = 0; i < g.size(); ++i) want.push_back(static_cast<double>(g[i]) * m1[i]);
    EXPECT_TRUE(allNear(want, toVector(*gx, dev), 1e-6, 0.0));

    Values none;
    a.setStepSeed(9);
    expectGradientsMatchFiniteDifferences(a, dev, x, plain(withBatch(4, sample)), none, none, 64);
}

TEST(Dropout, InferenceAndZeroRateAreIdentity) {
    CpuDevice dev(1);
    const Values x = randomValues(3 * 40, 65);
    Dropout layer(dev, {40}, 0.5f), none(dev, {40}, 0.0f);
    layer.setStepSeed(1);
    none.setStepSeed(1);
    Tensor xt = fromVector(x, plain({3, 40}), dev);
    EXPECT_EQ(toVector(layer.forward(xt, false), dev), x);
    EXPECT_EQ(toVector(none.forward(xt, true), dev), x);
}

// ---------------------------------------------------------------- input gradients switched off

TEST(Layers, NoInputGradientStillWritesParameterGradients) {
    CpuDevice dev(2);
    const ConvShape s{2, 3, 5, 5, 4, 3, 1, 1};
    const Values x = randomValues(product(s.inDims()), 71);
    for (bool isConv : {false, true}) {
        SCOPED_TRACE(isConv ? "conv2d" : "dense");
        auto make = [&]() -> std::unique_ptr<Layer> {
            if (isConv) return std::make_unique<Conv2D>(dev, Dims{s.c, s.h, s.w}, s.f, s.k, s.stride, s.pad, true);
            return std::make_unique<Dense>(dev, Dims{s.c, s.h, s.w}, 6, true);
        };
        std::unique_ptr<Layer> with = make(), without = make();
        without->setNeedsInputGrad(false);  // before the first forward: plans are built for it
        Values params = randomValues(with->paramCount(), 72);
        Values gradsWith(params.size()), gradsWithout(params.size(), kStale);
        with->bindParams(params.data(), gradsWith.data());
        without->bindParams(params.data(), gradsWithout.data());
        Tensor x1 = fromVector(x, plain(s.inDims()), dev), x2 = fromVector(x, plain(s.inDims()), dev);
        Tensor& y1 = with->forward(x1, true);
        Tensor& y2 = without->forward(x2, true);
        const Values g = randomValues(y1.elements(), 73);
        Tensor g1 = fromVector(g, y1.desc(), dev), g2 = fromVector(g, y2.desc(), dev);
        EXPECT_NE(with->backward(g1), nullptr);
        EXPECT_EQ(without->backward(g2), nullptr);
        dev.stream().wait();
        EXPECT_TRUE(allNear(gradsWith, gradsWithout, 1e-6, 1e-6));
    }
}

TEST(Layers, NoInputGradientFromPoolingAndFlatten) {
    CpuDevice dev(1);
    MaxPool2D pool(dev, {2, 4, 4}, 2, 2);
    Flatten flat(dev, {2, 2, 2});
    pool.setNeedsInputGrad(false);
    flat.setNeedsInputGrad(false);
    Tensor x = fromVector(distinctValues(64, 74, 0.1f), plain({2, 2, 4, 4}), dev);
    Tensor& y = flat.forward(pool.forward(x, true), true);
    Tensor g = fromVector(Values(16, 1.0f), y.desc(), dev);
    EXPECT_EQ(flat.backward(g), nullptr);
    Tensor gp = fromVector(Values(16, 1.0f), pool.forward(x, true).desc(), dev);
    EXPECT_EQ(pool.backward(gp), nullptr);
}

// ---------------------------------------------------------------- plans reused across batch sizes

TEST(Layers, BatchSizeChangesReusePlansCorrectly) {
    CpuDevice dev(2);
    const ConvShape base{0, 3, 6, 6, 4, 3, 1, 1};
    Conv2D conv(dev, {base.c, base.h, base.w}, base.f, base.k, base.stride, base.pad, true);
    ReLU relu(dev, conv.outputShape());
    MaxPool2D pool(dev, relu.outputShape(), 2, 2);
    Dense dense(dev, pool.outputShape(), 5, true);  // straight on the pooled (blocked) activations
    Values params = randomValues(conv.paramCount() + dense.paramCount(), 81), grads(params.size());
    conv.bindParams(params.data(), grads.data());
    dense.bindParams(params.data() + conv.paramCount(), grads.data() + conv.paramCount());
    const int64_t nw = product(base.weightDims()), in = product(pool.outputShape());
    const Values W(params.begin(), params.begin() + nw), b(params.begin() + nw, params.begin() + conv.paramCount());
    const Values dW(params.begin() + conv.paramCount(), params.end() - 5), db(params.end() - 5, params.end());

    for (int64_t n : {4, 3, 4, 3}) {
        SCOPED_TRACE("batch " + std::to_string(n));
        ConvShape s = base;
        s.n = n;
        const Values x = randomValues(product(s.inDims()), 82 + static_cast<uint64_t>(n));
        Tensor xt = fromVector(x, plain(s.inDims()), dev);
        Tensor& y = dense.forward(pool.forward(relu.forward(conv.forward(xt, true), true), true), true);

        // Reference forward in double, keeping the pooling argmax for the backward.
        Doubles a = convRef(s, x, W, b);
        for (double& v : a) v = std::max(v, 0.0);
        const Values af(a.begin(), a.end());
        const Doubles pooled = maxPoolRef(af, n, s.f, s.oh(), s.ow(), 2, 2);
        const Values pf(pooled.begin(), pooled.end());
        EXPECT_TRUE(allNear(denseRef(pf, dW, db, n, in, 5), toVector(y, dev), 1e-4, 1e-4));

        // Backward: dense input gradient routed through pool argmax and relu into the conv.
        const Values g = randomValues(n * 5, 90 + static_cast<uint64_t>(n));
        Tensor gy = fromVector(g, y.desc(), dev);
        Tensor* gx = conv.backward(*relu.backward(*pool.backward(*dense.backward(gy))));
        dev.stream().wait();
        Values gPooled(pf.size(), 0.0f);
        for (int64_t r = 0; r < n; ++r)
            for (int64_t i = 0; i < in; ++i)
                for (int64_t o = 0; o < 5; ++o)
                    gPooled[static_cast<size_t>(r * in + i)] += g[static_cast<size_t>(r * 5 + o)] * dW[static_cast<size_t>(o * in + i)];
        Values gConv(af.size(), 0.0f);
        const int64_t oh = s.oh(), ph = oh / 2;
        for (size_t k = 0; k < pf.size(); ++k) {  // the pooled value came from the window element equal to it
            const int64_t plane = static_cast<int64_t>(k) / (ph * ph), py = (static_cast<int64_t>(k) / ph) % ph,
                          px = static_cast<int64_t>(k) % ph;
            for (int64_t i = 0; i < 2; ++i)
                for (int64_t j = 0; j < 2; ++j) {
                    const size_t at = static_cast<size_t>((plane * oh + py * 2 + i) * oh + px * 2 + j);
                    if (af[at] == pf[k] && af[at] > 0.0f) gConv[at] = gPooled[k];
                }
        }
        const ConvGrads want = convBackwardRef(s, x, W, gConv);
        EXPECT_TRUE(allNear(want.dx, toVector(*gx, dev), 1e-3, 1e-4)) << "input gradient";
        EXPECT_TRUE(allNear(want.dw, Values(grads.begin(), grads.begin() + nw), 1e-3, 1e-4)) << "conv weights";
        EXPECT_TRUE(allNear(want.db, Values(grads.begin() + nw, grads.begin() + conv.paramCount()), 1e-3, 1e-4));
    }
}

}  // namespace
}  // namespace trainbench::engine
