// SoftmaxCrossEntropy: mean loss and its gradient against a double computation, stability for huge
// logits, the count of correct predictions, and bad labels.
#include "engine/layers/softmaxcrossentropy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/engine/reference.h"

namespace trainbench::engine {
namespace {

using namespace testref;

struct Expected {
    double loss = 0.0;
    Doubles grad;
};

// The textbook formulas in double: loss = mean(log sum exp z - z_y), grad = (softmax - onehot) / N.
Expected reference(const Values& z, const std::vector<int32_t>& labels, int64_t classes) {
    const int64_t n = static_cast<int64_t>(labels.size());
    Expected e;
    e.grad.resize(z.size());
    for (int64_t i = 0; i < n; ++i) {
        double m = -INFINITY, sum = 0.0;
        for (int64_t c = 0; c < classes; ++c) m = std::max(m, static_cast<double>(z[static_cast<size_t>(i * classes + c)]));
        for (int64_t c = 0; c < classes; ++c) sum += std::exp(z[static_cast<size_t>(i * classes + c)] - m);
        const int32_t y = labels[static_cast<size_t>(i)];
        e.loss += (std::log(sum) + m - z[static_cast<size_t>(i * classes + y)]) / static_cast<double>(n);
        for (int64_t c = 0; c < classes; ++c) {
            const double p = std::exp(z[static_cast<size_t>(i * classes + c)] - m) / sum;
            e.grad[static_cast<size_t>(i * classes + c)] = (p - (c == y ? 1.0 : 0.0)) / static_cast<double>(n);
        }
    }
    return e;
}

TEST(SoftmaxCrossEntropy, LossAndGradientMatchDoubleReference) {
    const int64_t n = 6, classes = 5;
    const Values z = randomValues(n * classes, 101, -4.0f, 4.0f);
    const std::vector<int32_t> labels{0, 4, 2, 2, 1, 3};
    Values grad(z.size(), 999.0f);
    const LossResult r = SoftmaxCrossEntropy::compute(z.data(), n, classes, labels.data(), grad.data());
    const Expected e = reference(z, labels, classes);
    EXPECT_NEAR(r.loss, e.loss, 1e-6 * e.loss);
    EXPECT_TRUE(allNear(e.grad, grad, 1e-5, 1e-7));
    for (int64_t i = 0; i < n; ++i) {  // each row of softmax - onehot sums to zero
        double s = 0.0;
        for (int64_t c = 0; c < classes; ++c) s += grad[static_cast<size_t>(i * classes + c)];
        EXPECT_NEAR(s, 0.0, 1e-7) << "row " << i;
    }
}

TEST(SoftmaxCrossEntropy, GradientIsTheDerivativeOfTheMeanLoss) {
    const int64_t n = 3, classes = 4;
    Values z = randomValues(n * classes, 102, -2.0f, 2.0f);
    const std::vector<int32_t> labels{3, 0, 1};
    Values grad(z.size());
    SoftmaxCrossEntropy::compute(z.data(), n, classes, labels.data(), grad.data());
    const Doubles numeric = centralDiffs(z, 1e-2f, [&] {
        return SoftmaxCrossEntropy::compute(z.data(), n, classes, labels.data(), nullptr).loss;
    });
    EXPECT_TRUE(gradNear(numeric, grad, 1e-3, 1e-5));
}

TEST(SoftmaxCrossEntropy, TensorOverloadMatchesPointerOverload) {
    CpuDevice dev(1);
    const Values z = randomValues(2 * 3, 103);
    const std::vector<int32_t> labels{1, 2};
    Tensor logits = fromVector(z, plain({2, 3}), dev);
    Tensor grad(plain({2, 3}), dev.engine());
    Values want(6);
    const LossResult a = SoftmaxCrossEntropy::compute(logits, labels.data(), &grad);
    const LossResult b = SoftmaxCrossEntropy::compute(z.data(), 2, 3, labels.data(), want.data());
    EXPECT_EQ(a.loss, b.loss);
    EXPECT_EQ(a.correct, b.correct);
    EXPECT_EQ(Values(grad.data(), grad.data() + 6), want);
}

TEST(SoftmaxCrossEntropy, HugeLogitsStayFinite) {
    // exp(1e4) overflows even in double: only a max-shifted log-sum-exp survives this.
    const Values z{1e4f, 0.0f, -1e4f,   // confident and right
                   1e4f, 0.0f, -1e4f,   // confident and wrong (label 2)
                   1e4f, 1e4f, 1e4f};   // three-way tie at a huge value
    const std::vector<int32_t> labels{0, 2, 1};
    Values grad(z.size());
    const LossResult r = SoftmaxCrossEntropy::compute(z.data(), 3, 3, labels.data(), grad.data());
    ASSERT_TRUE(std::isfinite(r.loss));
    EXPECT_NEAR(r.loss, (0.0 + 2e4 + std::log(3.0)) / 3.0, 1e-3);
    for (float g : grad) EXPECT_TRUE(std::isfinite(g));
    const double third = 1.0 / 3.0;
    EXPECT_TRUE(allNear(Doubles{0, 0, 0, third, 0, -third, third / 3, third / 3 - third, third / 3}, grad, 1e-6, 1e-7));
}

TEST(SoftmaxCrossEntropy, CountsExamplesWhoseArgMaxIsTheLabel) {
    const Values z{0.1f, 0.9f, 0.0f,
                   2.0f, 1.0f, 3.0f,
                   -1.0f, -2.0f, -3.0f,
                   5.0f, 4.0f, 0.0f};
    const std::vector<int32_t> labels{1, 0, 0, 1};
    const LossResult r = SoftmaxCrossEntropy::compute(z.data(), 4, 3, labels.data(), nullptr);
    EXPECT_EQ(r.correct, 2);
}

TEST(SoftmaxCrossEntropy, OutOfRangeLabelThrows) {
    const Values z(2 * 4, 0.0f);
    Values grad(z.size());
    for (int32_t bad : {4, -1, 100}) {
        const std::vector<int32_t> labels{0, bad};
        try {
            SoftmaxCrossEntropy::compute(z.data(), 2, 4, labels.data(), grad.data());
            ADD_FAILURE() << "label " << bad << " was accepted";
        } catch (const std::out_of_range& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(std::to_string(bad)), std::string::npos) << msg;
            EXPECT_NE(msg.find("example 1"), std::string::npos) << msg;
        }
    }
}

}  // namespace
}  // namespace trainbench::engine
