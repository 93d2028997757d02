// Batch norm: forward against a per-channel double reference (batch statistics in training, running
// statistics in evaluation), Keras' running-statistics rule with the biased variance, backward
// against finite differences, the fused ReLU, and statistics shards against separate layers.
#include "engine/layers/batchnorm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/util/errors.h"
#include "tests/engine/normref.h"

namespace trainbench::engine {
namespace {

using namespace testref;

// float32 statistics over at most a few hundred values of order 1: relative errors ~1e-6.
constexpr double kFwdTol = 2e-5;
// Finite differences use one thread (thousands of tiny forwards; see test_layers.cpp).
constexpr int kThreads = 1;

struct BnCase {
    const char* name;
    int64_t n;
    Dims sample;
    bool blocked;  // nChw16c input, as a convolution hands it over
};

int64_t spatialOf(const Dims& sample) { return product(sample) / sample[0]; }

dnnl::memory::desc layoutOf(const BnCase& c, int64_t n) {
    return c.blocked ? blocked16(withBatch(n, c.sample)) : plain(withBatch(n, c.sample));
}

// gamma in [0.5, 1.5], beta in [-0.5, 0.5]: away from the initial 1 and 0, so both are exercised.
Values someParams(int64_t channels, uint64_t seed) {
    Values p = randomValues(channels, seed, 0.5f, 1.5f);
    const Values beta = randomValues(channels, seed + 1, -0.5f, 0.5f);
    p.insert(p.end(), beta.begin(), beta.end());
    return p;
}

class BatchNormTest : public ::testing::TestWithParam<BnCase> {};

TEST_P(BatchNormTest, TrainingUsesBatchStatisticsAndEvaluationTheRunningOnes) {
    const BnCase& c = GetParam();
    CpuDevice dev(2);
    const int64_t ch = c.sample[0], spatial = spatialOf(c.sample);
    const float momentum = 0.9f, eps = 1e-3f;
    BatchNorm layer(dev, c.sample, momentum, eps);
    ASSERT_EQ(layer.paramCount(), 2 * ch);
    ASSERT_EQ(layer.stateCount(), 2 * ch);
    Values params = someParams(ch, 1), grads(params.size()), state(static_cast<size_t>(2 * ch), 7.0f);
    layer.bindParams(params.data(), grads.data());
    layer.bindState(state.data());
    EXPECT_EQ(state, [&] { Values s(static_cast<size_t>(ch), 0.0f); s.resize(2 * s.size(), 1.0f); return s; }())
        << "running mean starts at 0 and running variance at 1, as in Keras";
    const Values gamma(params.begin(), params.begin() + ch), beta(params.begin() + ch, params.end());

    // Values in [-1, 3]: a mean far from 0, so a missing centring would show.
    const Values x = randomValues(c.n * ch * spatial, 2, -1.0f, 3.0f);
    Tensor xt = fromVector(x, layoutOf(c, c.n), dev);
    Tensor& y = layer.forward(xt, true);
    EXPECT_TRUE(y.desc() == xt.desc()) << "batch norm keeps its input's layout";
    const BatchNormRef want = batchNormRef(x, c.n, ch, spatial, gamma, beta, eps);
    EXPECT_TRUE(allNear(want.y, toVector(y, dev), kFwdTol, kFwdTol));

    // running = momentum * running + (1 - momentum) * batch statistic, from (0, 1).
    Doubles wantMean, wantVariance;
    for (int64_t k = 0; k < ch; ++k) {
        wantMean.push_back((1.0 - momentum) * want.mean[static_cast<size_t>(k)]);
        wantVariance.push_back(momentum + (1.0 - momentum) * want.variance[static_cast<size_t>(k)]);
    }
    EXPECT_TRUE(allNear(wantMean, Values(state.begin(), state.begin() + ch), 1e-5, 1e-6)) << "running mean";
    EXPECT_TRUE(allNear(wantVariance, Values(state.begin() + ch, state.end()), 1e-5, 1e-6)) << "running variance";

    // Evaluation normalises another batch with the running statistics, not its own, and leaves them.
    const Values x2 = randomValues(c.n * ch * spatial, 3, -2.0f, 2.0f);
    Tensor x2t = fromVector(x2, layoutOf(c, c.n), dev);
    const Values stateBefore = state;
    const Doubles runMean(state.begin(), state.begin() + ch), runVariance(state.begin() + ch, state.end());
    const BatchNormRef eval = batchNormRef(x2, c.n, ch, spatial, gamma, beta, eps, &runMean, &runVariance);
    EXPECT_TRUE(allNear(eval.y, toVector(layer.forward(x2t, false), dev), kFwdTol, kFwdTol));
    EXPECT_EQ(state, stateBefore) << "evaluation must not move the running statistics";
}

// BN is smooth: with inputs of order 1 and 10..60 values per channel, the truncation error of a
// central difference with step 0.01 is ~1e-5 and float rounding of the loss ~1e-4 / 0.02 = 5e-6,
// far inside 1e-3 + 1%.
TEST_P(BatchNormTest, BackwardMatchesFiniteDifferences) {
    const BnCase& c = GetParam();
    CpuDevice dev(kThreads);
    const int64_t ch = c.sample[0];
    BatchNorm layer(dev, c.sample, 0.99f, 1e-3f);
    Values params = someParams(ch, 4), grads(params.size()), state(static_cast<size_t>(2 * ch));
    layer.bindParams(params.data(), grads.data());
    layer.bindState(state.data());
    const Values x = randomValues(c.n * product(c.sample), 5, -1.0f, 3.0f);
    expectBackwardMatchesFiniteDifferences(layer, dev, x, layoutOf(c, c.n), params, grads, 6, GradCheck{});
}

INSTANTIATE_TEST_SUITE_P(Layers, BatchNormTest,
                         ::testing::Values(BnCase{"afterDense", 6, {5}, false},
                                           BnCase{"afterConvPlain", 3, {3, 4, 5}, false},
                                           BnCase{"afterConvBlocked", 3, {3, 4, 5}, true},
                                           BnCase{"blocked17Channels", 2, {17, 3, 2}, true},
                                           // ResNet-50's last stage on small images: 1x1, few values per channel.
                                           BnCase{"blocked1x1", 4, {20, 1, 1}, true}),
                         CaseName());

// The fused ReLU is ReLU of the normalised values, and its gradient is the plain layer's gradient
// of the upstream gradient masked where the output is 0.
TEST(BatchNorm, FusedReluIsReluOfTheOutputAndMasksTheGradient) {
    CpuDevice dev(2);
    const Dims sample{5, 4, 3};
    const int64_t n = 4, ch = 5;
    for (bool blocked : {false, true}) {
        SCOPED_TRACE(blocked ? "blocked" : "plain");
        BatchNorm plainBn(dev, sample, 0.99f, 1e-3f), fused(dev, sample, 0.99f, 1e-3f);
        ASSERT_TRUE(fused.fuseReLU());
        EXPECT_TRUE(fused.fusedReLUBackward());
        Values params = someParams(ch, 8), g1(params.size()), g2(params.size()), s1(2 * ch), s2(2 * ch);
        plainBn.bindParams(params.data(), g1.data());
        fused.bindParams(params.data(), g2.data());
        plainBn.bindState(s1.data());
        fused.bindState(s2.data());
        const Values x = randomValues(n * product(sample), 9);
        const auto md = blocked ? blocked16(withBatch(n, sample)) : plain(withBatch(n, sample));
        Tensor x1 = fromVector(x, md, dev), x2 = fromVector(x, md, dev);
        const Values y = toVector(plainBn.forward(x1, true), dev);
        const Values yRelu = toVector(fused.forward(x2, true), dev);
        Values masked = randomValues(static_cast<int64_t>(y.size()), 10);
        const Values w = masked;
        Doubles want;
        int64_t zeros = 0;
        for (size_t i = 0; i < y.size(); ++i) {
            want.push_back(std::max(0.0f, y[i]));
            if (y[i] <= 0.0f) {
                masked[i] = 0.0f;
                ++zeros;
            }
        }
        ASSERT_GT(zeros, 10) << "the data must exercise the ReLU";
        EXPECT_TRUE(allNear(want, yRelu, 0.0, 1e-6));
        Tensor gy1 = fromVector(masked, plainBn.forward(x1, true).desc(), dev);
        Tensor gy2 = fromVector(w, fused.forward(x2, true).desc(), dev);
        const Values gx1 = toVector(*plainBn.backward(gy1), dev);
        const Values gx2 = toVector(*fused.backward(gy2), dev);
        EXPECT_TRUE(allNear(gx1, gx2, 1e-5, 1e-6)) << "input gradient";
        EXPECT_TRUE(allNear(g1, g2, 1e-5, 1e-6)) << "gamma and beta gradients";
    }
}

// Keras' rule over several steps, in closed form: after k steps on the same batch from (0, 1),
// mean = (1 - m^k) mu and variance = m^k + (1 - m^k) sigma^2 with the *biased* sigma^2 (divided by
// the N*H*W values, not N*H*W - 1: with 6 values per channel the unbiased one is 20 % larger).
TEST(BatchNorm, RunningStatisticsFollowKerasRuleWithTheBiasedVariance) {
    CpuDevice dev(1);
    const Dims sample{2, 3, 1};
    const int64_t n = 2, ch = 2;
    const float m = 0.8f;
    BatchNorm layer(dev, sample, m, 1e-3f);
    Values params = someParams(ch, 11), grads(params.size()), state(2 * ch);
    layer.bindParams(params.data(), grads.data());
    layer.bindState(state.data());
    const Values x = randomValues(n * product(sample), 12, -1.0f, 2.0f);
    Tensor xt = fromVector(x, plain(withBatch(n, sample)), dev);
    const int steps = 5;
    for (int k = 0; k < steps; ++k) layer.forward(xt, true);
    const BatchNormRef ref = batchNormRef(x, n, ch, 3, Values(params.begin(), params.begin() + ch),
                                          Values(params.begin() + ch, params.end()), 1e-3);
    const double mk = std::pow(static_cast<double>(m), steps);
    for (int64_t c = 0; c < ch; ++c) {
        const size_t k = static_cast<size_t>(c);
        EXPECT_NEAR(layer.runningMean()[k], (1.0 - mk) * ref.mean[k], 1e-5) << "channel " << c;
        EXPECT_NEAR(layer.runningVariance()[k], mk + (1.0 - mk) * ref.variance[k], 1e-5) << "channel " << c;
    }
}

// ---------------------------------------------------------------- statistics shards

struct ShardCase {
    const char* name;
    int64_t n;
    int shards;
    Dims sample;
    bool blocked;
};

class BatchNormShardsTest : public ::testing::TestWithParam<ShardCase> {};

// A batch normalised in n shards is exactly n batch norms, one per shard (what n cores do): the same
// outputs and input gradients shard by shard, gamma and beta gradients summed over the shards (they
// act on every shard), and running statistics moved by the mean of the shards' statistics.
TEST_P(BatchNormShardsTest, EqualSeparateLayersOnTheShards) {
    const ShardCase& c = GetParam();
    CpuDevice dev(2);
    const int64_t ch = c.sample[0], per = c.n / c.shards, shardValues = per * product(c.sample);
    const Values params = someParams(ch, 21);
    const Values x = randomValues(c.n * product(c.sample), 22, -1.0f, 3.0f);
    const Values w = randomValues(c.n * product(c.sample), 23);
    auto md = [&](int64_t n) { return c.blocked ? blocked16(withBatch(n, c.sample)) : plain(withBatch(n, c.sample)); };

    BatchNorm whole(dev, c.sample, 0.9f, 1e-3f);
    whole.setStatisticsShards(c.shards);
    Values wholeParams = params, wholeGrads(params.size()), wholeState(2 * ch);
    whole.bindParams(wholeParams.data(), wholeGrads.data());
    whole.bindState(wholeState.data());
    Tensor xt = fromVector(x, md(c.n), dev);
    const Values y = toVector(whole.forward(xt, true), dev);
    Tensor gy = fromVector(w, whole.forward(xt, true).desc(), dev);
    const Values gx = toVector(*whole.backward(gy), dev);
    // Two training forwards ran: the running statistics moved twice.

    Doubles gradSum(params.size(), 0.0), meanOfStates(2 * static_cast<size_t>(ch), 0.0);
    for (int k = 0; k < c.shards; ++k) {
        SCOPED_TRACE("shard " + std::to_string(k));
        BatchNorm one(dev, c.sample, 0.9f, 1e-3f);
        Values p = params, g(params.size()), s(2 * ch);
        one.bindParams(p.data(), g.data());
        one.bindState(s.data());
        const auto from = static_cast<std::ptrdiff_t>(k * shardValues), to = from + shardValues;
        const Values xs(x.begin() + from, x.begin() + to), ws(w.begin() + from, w.begin() + to);
        Tensor xst = fromVector(xs, md(per), dev);
        EXPECT_TRUE(allNear(toVector(one.forward(xst, true), dev), Values(y.begin() + from, y.begin() + to), 1e-6, 1e-6))
            << "output";
        Tensor gys = fromVector(ws, one.forward(xst, true).desc(), dev);
        EXPECT_TRUE(allNear(toVector(*one.backward(gys), dev), Values(gx.begin() + from, gx.begin() + to), 1e-5, 1e-6))
            << "input gradient";
        for (size_t i = 0; i < g.size(); ++i) gradSum[i] += g[i];
        for (size_t i = 0; i < s.size(); ++i) meanOfStates[i] += s[i] / c.shards;
    }
    EXPECT_TRUE(allNear(gradSum, wholeGrads, 1e-5, 1e-5)) << "gamma and beta gradients: the sum over shards";
    EXPECT_TRUE(allNear(meanOfStates, wholeState, 1e-6, 1e-6)) << "running statistics: the mean over shards";
}

INSTANTIATE_TEST_SUITE_P(Layers, BatchNormShardsTest,
                         ::testing::Values(ShardCase{"fourShardsPlain", 8, 4, {3, 4, 5}, false},
                                           ShardCase{"fourShardsBlocked", 8, 4, {3, 4, 5}, true},
                                           ShardCase{"twoShardsBlocked20Channels", 6, 2, {20, 3, 3}, true},
                                           ShardCase{"threeShardsAfterDense", 9, 3, {7}, false},
                                           ShardCase{"oneShardIsTheWholeBatch", 4, 1, {3, 2, 2}, true}),
                         CaseName());

TEST(BatchNormShards, BadShardCountsAreRefusedWithTheirNumbers) {
    CpuDevice dev(1);
    BatchNorm layer(dev, {3, 2, 2}, 0.99f, 1e-3f);
    Values params = someParams(3, 31), grads(params.size()), state(6);
    layer.bindParams(params.data(), grads.data());
    layer.bindState(state.data());
    layer.setStatisticsShards(4);
    Tensor x = fromVector(randomValues(6 * 12, 32), plain({6, 3, 2, 2}), dev);
    try {
        layer.forward(x, true);
        ADD_FAILURE() << "a batch of 6 cannot make 4 equal shards";
    } catch (const ModelError& e) {
        EXPECT_STREQ(e.what(), "batch_norm: a batch of 6 examples does not split into 4 equal statistics shards");
    }
    EXPECT_NO_THROW(layer.forward(x, false)) << "evaluation is not sharded";
    EXPECT_THROW(layer.setStatisticsShards(0), ModelError);
}

}  // namespace
}  // namespace trainbench::engine
