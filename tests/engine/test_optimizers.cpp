// Optimizers against values worked out by hand (PyTorch's formulations), and the warm-up schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/optim/adam.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/sgd.h"

namespace trainbench::engine {
namespace {

using Floats = std::vector<float>;

OptimizerConfig sgd(float lr, float momentum = 0.0f, bool nesterov = false, float wd = 0.0f) {
    OptimizerConfig c;
    c.kind = OptimizerKind::SGD;
    c.learning_rate = lr;
    c.momentum = momentum;
    c.nesterov = nesterov;
    c.weight_decay = wd;
    return c;
}

void expectParams(const Floats& got, const std::vector<double>& want, const char* when) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6 * (1.0 + std::abs(want[i]))) << when << ", parameter " << i;
}

TEST(SGD, PlainStepIsLearningRateTimesGradient) {
    auto opt = Optimizer::create(sgd(0.1f), 3);
    Floats p{1.0f, -2.0f, 0.5f};
    opt->step(p.data(), Floats{0.5f, -1.0f, 0.0f}.data(), 3, 1);
    expectParams(p, {0.95, -1.9, 0.5}, "step 1");
    opt->step(p.data(), Floats{1.0f, 1.0f, -2.0f}.data(), 3, 2);
    expectParams(p, {0.85, -2.0, 0.7}, "step 2");
}

TEST(SGD, MomentumStartsFromTheGradientThenAccumulates) {
    // v1 = g1, v2 = 0.9 v1 + g2, v3 = 0.9 v2 + g3; p -= 0.1 v.
    auto opt = Optimizer::create(sgd(0.1f, 0.9f), 2);
    Floats p{1.0f, -1.0f};
    opt->step(p.data(), Floats{1.0f, -2.0f}.data(), 2, 1);   // v = (1, -2)
    expectParams(p, {0.9, -0.8}, "step 1");
    opt->step(p.data(), Floats{0.5f, 0.0f}.data(), 2, 2);    // v = (1.4, -1.8)
    expectParams(p, {0.76, -0.62}, "step 2");
    opt->step(p.data(), Floats{-1.0f, 1.0f}.data(), 2, 3);   // v = (0.26, -0.62)
    expectParams(p, {0.734, -0.558}, "step 3");
}

TEST(SGD, NesterovStepsAlongGradientPlusMomentumTimesVelocity) {
    // p -= 0.1 (g + 0.9 v) with v updated first.
    auto opt = Optimizer::create(sgd(0.1f, 0.9f, /*nesterov=*/true), 2);
    Floats p{1.0f, -1.0f};
    opt->step(p.data(), Floats{1.0f, -2.0f}.data(), 2, 1);   // v = (1, -2); g + 0.9v = (1.9, -3.8)
    expectParams(p, {0.81, -0.62}, "step 1");
    opt->step(p.data(), Floats{0.5f, 0.0f}.data(), 2, 2);    // v = (1.4, -1.8); g + 0.9v = (1.76, -1.62)
    expectParams(p, {0.634, -0.458}, "step 2");
}

TEST(SGD, WeightDecayAddsL2TermToTheGradient) {
    {
        auto opt = Optimizer::create(sgd(0.1f, 0.0f, false, 0.5f), 2);
        Floats p{2.0f, -4.0f};
        opt->step(p.data(), Floats{1.0f, 0.0f}.data(), 2, 1);  // g = (1 + 1, 0 - 2)
        expectParams(p, {1.8, -3.8}, "plain");
    }
    {
        auto opt = Optimizer::create(sgd(0.1f, 0.9f, false, 0.5f), 1);
        Floats p{2.0f};
        opt->step(p.data(), Floats{1.0f}.data(), 1, 1);  // g = 2, v = 2, p = 1.8
        opt->step(p.data(), Floats{1.0f}.data(), 1, 2);  // g = 1.9, v = 3.7, p = 1.43
        expectParams(p, {1.43}, "momentum");
    }
}

// Adam in double, exactly as PyTorch writes it.
struct AdamRef {
    AdamRef(double lr_, double b1_, double b2_, double eps_, double wd_ = 0.0)
        : lr(lr_), b1(b1_), b2(b2_), eps(eps_), wd(wd_) {}
    double lr, b1, b2, eps, wd;
    std::vector<double> m, v;
    void step(std::vector<double>& p, const std::vector<double>& grad, int t) {
        m.resize(p.size());
        v.resize(p.size());
        for (size_t i = 0; i < p.size(); ++i) {
            const double g = grad[i] + wd * p[i];
            m[i] = b1 * m[i] + (1 - b1) * g;
            v[i] = b2 * v[i] + (1 - b2) * g * g;
            const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
            p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + eps);
        }
    }
};

TEST(Adam, ThreeStepsMatchHandComputation) {
    OptimizerConfig c;
    c.kind = OptimizerKind::Adam;
    c.learning_rate = 0.01f;
    c.beta1 = 0.9f;
    c.beta2 = 0.999f;
    c.epsilon = 1e-8f;
    auto opt = Optimizer::create(c, 4);
    Floats p{1.0f, -0.5f, 0.0f, 2.0f};
    // Step 1 has m_hat = g and v_hat = g^2, so every parameter moves by lr against the sign of g.
    opt->step(p.data(), Floats{0.2f, -3.0f, 1e-3f, 0.0f}.data(), 4, 1);
    expectParams(p, {0.99, -0.49, -0.01 * 1e-3 / (1e-3 + 1e-8), 2.0}, "step 1");

    AdamRef ref(0.01, 0.9, 0.999, 1e-8);
    std::vector<double> q{1.0, -0.5, 0.0, 2.0};
    const std::vector<std::vector<double>> grads{{0.2, -3.0, 1e-3, 0.0}, {-0.1, -1.0, 0.5, 0.0}, {0.3, 2.0, -0.25, 1.0}};
    for (int t = 1; t <= 3; ++t) ref.step(q, grads[static_cast<size_t>(t - 1)], t);
    for (int t = 2; t <= 3; ++t) {
        const auto& g = grads[static_cast<size_t>(t - 1)];
        const Floats gf(g.begin(), g.end());
        opt->step(p.data(), gf.data(), 4, t);
    }
    expectParams(p, q, "step 3");
    // Worked by hand for the first parameter: m = (0.02, 0.008, 0.0372), v = (4e-5, 4.996e-5, 1.3991e-4).
    EXPECT_NEAR(q[0], 0.99 - 0.01 * (0.008 / 0.19) / (std::sqrt(4.996e-5 / 0.001999) + 1e-8)
                          - 0.01 * (0.0372 / 0.271) / (std::sqrt(1.3991004e-4 / 0.002997001) + 1e-8), 1e-9);
}

TEST(Adam, WeightDecayAndManyParametersFollowTheFormula) {
    OptimizerConfig c;
    c.kind = OptimizerKind::Adam;
    c.learning_rate = 0.05f;
    c.weight_decay = 0.1f;
    c.epsilon = 1e-7f;
    const size_t n = 1000;  // large enough for the OpenMP loop to split
    auto opt = Optimizer::create(c, static_cast<int64_t>(n));
    AdamRef ref(0.05, 0.9, 0.999, 1e-7, 0.1);
    Floats p(n);
    std::vector<double> q(n);
    for (size_t i = 0; i < n; ++i) q[i] = p[i] = static_cast<float>(std::sin(0.1 * static_cast<double>(i)));
    for (int t = 1; t <= 3; ++t) {
        Floats g(n);
        std::vector<double> gd(n);
        for (size_t i = 0; i < n; ++i) gd[i] = g[i] = static_cast<float>(std::cos(0.37 * static_cast<double>(i) + t));
        opt->step(p.data(), g.data(), static_cast<int64_t>(n), t);
        ref.step(q, gd, t);
    }
    for (size_t i = 0; i < n; ++i) ASSERT_NEAR(p[i], q[i], 1e-5) << "parameter " << i;
}

TEST(Optimizer, CreateMakesTheConfiguredKind) {
    OptimizerConfig c;
    c.kind = OptimizerKind::SGD;
    EXPECT_NE(dynamic_cast<SGD*>(Optimizer::create(c, 3).get()), nullptr);
    c.kind = OptimizerKind::Adam;
    EXPECT_NE(dynamic_cast<Adam*>(Optimizer::create(c, 3).get()), nullptr);
}

TEST(Optimizer, WarmupIsLinearFromZeroToTheLearningRate) {
    OptimizerConfig c = sgd(0.1f);
    c.warmup_steps = 4;
    auto opt = Optimizer::create(c, 1);
    const double lr = 0.1f;  // the configured float, exactly
    EXPECT_DOUBLE_EQ(opt->learningRate(0), 0.0);
    EXPECT_DOUBLE_EQ(opt->learningRate(1), lr / 4);
    EXPECT_DOUBLE_EQ(opt->learningRate(2), lr / 2);
    EXPECT_DOUBLE_EQ(opt->learningRate(3), lr * 3 / 4);
    EXPECT_DOUBLE_EQ(opt->learningRate(4), lr);
    EXPECT_DOUBLE_EQ(opt->learningRate(1000), lr);
    c.warmup_steps = 0;
    EXPECT_DOUBLE_EQ(Optimizer::create(c, 1)->learningRate(1), lr);

    // The step uses the warmed-up rate.
    Floats p{1.0f};
    opt->step(p.data(), Floats{1.0f}.data(), 1, 1);
    EXPECT_NEAR(p[0], 0.975, 1e-7);
    OptimizerConfig a = c;
    a.kind = OptimizerKind::Adam;
    a.warmup_steps = 4;
    auto adam = Optimizer::create(a, 1);
    Floats q{1.0f};
    adam->step(q.data(), Floats{3.0f}.data(), 1, 1);  // first Adam step moves by the rate in force: 0.025
    EXPECT_NEAR(q[0], 0.975, 1e-6);
}

}  // namespace
}  // namespace trainbench::engine
