// Model: presets and their parameter counts, build errors, seeded initialisation, gradients of whole
// layer chains (blocked-layout hand-offs included) against finite differences, and determinism.
#include "engine/model/model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/layers/softmaxcrossentropy.h"
#include "engine/optim/optimizer.h"
#include "engine/util/errors.h"
#include "tests/engine/modelspecs.h"
#include "tests/engine/reference.h"

namespace trainbench::engine {
namespace {

using namespace testref;
using namespace testmodels;

LayerSpec pool(int size, int stride = 0) {
    LayerSpec s; s.kind = LayerKind::MaxPool2D; s.kernel = size; s.stride = stride; return s;
}
LayerSpec dropout(float rate) { LayerSpec s; s.kind = LayerKind::Dropout; s.rate = rate; return s; }


double lossOf(Model& m, Batch& b, bool training, uint64_t stepSeed) {
    Tensor& logits = m.forward(b.x.data(), b.n, training, stepSeed);
    m.device().stream().wait();
    return SoftmaxCrossEntropy::compute(logits, b.y.data(), nullptr).loss;
}

// One training step's forward and backward; returns the loss, leaves the gradients in m.grads().
double forwardBackward(Model& m, Batch& b, uint64_t stepSeed) {
    Tensor& logits = m.forward(b.x.data(), b.n, true, stepSeed);
    Tensor grad(Tensor::plainDesc({b.n, m.numClasses()}), m.device().engine());
    const double loss = SoftmaxCrossEntropy::compute(logits, b.y.data(), &grad).loss;
    m.backward(grad);
    m.device().stream().wait();
    return loss;
}

// ---------------------------------------------------------------- presets and build errors

TEST(Model, PresetsHaveTheExpectedParameterCounts) {
    CpuDevice dev(1);
    const std::vector<std::pair<std::string, int64_t>> presets{
        {"logreg", 784 * 10 + 10},
        {"mlp", 784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10},
        {"cnn", 32 * 9 + 32 + 64 * 32 * 9 + 64 + 1600 * 128 + 128 + 128 * 10 + 10}};
    for (const auto& [name, count] : presets) {
        Model m(preset(name), {1, 28, 28}, 10, dev, 42);
        EXPECT_EQ(m.paramCount(), count) << name;
        EXPECT_EQ(m.layers().back()->outputShape(), (Dims{10})) << name;
        EXPECT_EQ(m.summary().size(), m.layers().size()) << name;
    }
    EXPECT_EQ(Model(preset("mlp"), {1, 28, 28}, 10, dev, 1).paramCount(), 535818);
    EXPECT_EQ(Model(preset("cnn"), {1, 28, 28}, 10, dev, 1).paramCount(), 225034);
    EXPECT_THROW(presetLayers("resnet"), std::invalid_argument);
}

// The message a user sees must say what is wrong and what to do.
void expectModelError(const ModelSpec& spec, const Dims& sample, int64_t classes,
                      const std::vector<std::string>& mentions) {
    CpuDevice dev(1);
    try {
        Model m(spec, sample, classes, dev, 1);
        ADD_FAILURE() << "the model was built";
    } catch (const ModelError& e) {
        const std::string msg = e.what();
        for (const auto& w : mentions) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' missing in: " << msg;
    }
}

TEST(Model, WrongFinalWidthThrowsWithAHint) {
    expectModelError(custom({flatten, dense(5)}), {1, 28, 28}, 10, {"outputs 5", "10 classes", "dense layer of 10 units"});
    expectModelError(custom({conv(10, 3)}), {1, 8, 8}, 10, {"10x6x6", "10 classes"});
}

TEST(Model, ConvAfterFlattenThrowsWithAHint) {
    expectModelError(custom({flatten, conv(4, 3), flatten, dense(10)}), {1, 28, 28}, 10,
                     {"layer 1", "conv2d", "784", "flatten"});
    expectModelError(custom({flatten, pool(2), dense(10)}), {1, 28, 28}, 10, {"layer 1", "maxpool2d"});
}

TEST(Model, OtherBadSpecsThrow) {
    expectModelError(custom({}), {1, 28, 28}, 10, {"no layers"});
    expectModelError(custom({conv(4, 30), flatten, dense(10)}), {1, 28, 28}, 10, {"layer 0", "30", "28x28"});
    expectModelError(custom({flatten, dense(0)}), {1, 28, 28}, 10, {"layer 1", "units", "positive"});
    expectModelError(custom({conv(4, 3, 0), flatten, dense(10)}), {1, 28, 28}, 10, {"stride", "positive"});
}

TEST(Model, SeedDecidesTheInitialParameters) {
    CpuDevice dev(1);
    Model a(preset("cnn"), {1, 28, 28}, 10, dev, 7), b(preset("cnn"), {1, 28, 28}, 10, dev, 7),
        c(preset("cnn"), {1, 28, 28}, 10, dev, 8);
    const size_t bytes = static_cast<size_t>(a.paramCount()) * sizeof(float);
    EXPECT_EQ(std::memcmp(a.params(), b.params(), bytes), 0);
    EXPECT_NE(std::memcmp(a.params(), c.params(), bytes), 0);
}

TEST(Model, DenseInitIsGlorotUniformWithZeroBias) {
    CpuDevice dev(1);
    Model m(custom({flatten, dense(30), relu, dense(10)}), {1, 8, 8}, 10, dev, 3);
    const float limit = std::sqrt(6.0f / (64 + 30));
    float lo = 1, hi = -1;
    for (int64_t i = 0; i < 64 * 30; ++i) { lo = std::min(lo, m.params()[i]); hi = std::max(hi, m.params()[i]); }
    EXPECT_GE(lo, -limit);
    EXPECT_LE(hi, limit);
    EXPECT_LT(lo, -0.8f * limit);  // spread over the range, not a constant
    EXPECT_GT(hi, 0.8f * limit);
    for (int64_t i = 64 * 30; i < 64 * 30 + 30; ++i) EXPECT_EQ(m.params()[i], 0.0f);
}

// ---------------------------------------------------------------- gradients through whole chains

struct ChainCase {
    const char* name;
    std::function<ModelSpec()> spec;
    Dims sample;
};

class ModelGradientTest : public ::testing::TestWithParam<ChainCase> {};

TEST_P(ModelGradientTest, GradientsMatchFiniteDifferencesOfTheLoss) {
    const ChainCase& c = GetParam();
    CpuDevice dev(2);
    Model m(c.spec(), c.sample, 3, dev, 5);
    // Non-zero biases, so that a bias gradient bug cannot hide behind zeros.
    Rng rng(6);
    for (int64_t i = 0; i < m.paramCount(); ++i)
        if (m.params()[i] == 0.0f) m.params()[i] = rng.uniform(-0.1f, 0.1f);
    Batch b = randomBatch(m, 4, 9);
    const uint64_t stepSeed = 11;  // fixes the dropout mask, so training-mode loss is a function

    std::fill(m.grads(), m.grads() + m.paramCount(), 1e6f);
    forwardBackward(m, b, stepSeed);
    const Values grads(m.grads(), m.grads() + m.paramCount());

    // Float forwards put ~1e-7 of noise on the loss, ~1e-4 on a slope with a step of 1e-3. ReLU and
    // pooling kinks crossed by a step are detected (one-sided slopes differ by > 2e-4 + 1%) and
    // skipped, at most 15% of the parameters; an undetected one errs by < 1e-4 + 0.5%.
    const Doubles numeric = centralDiffs(m.params(), static_cast<size_t>(m.paramCount()), 1e-3f,
                                         [&] { return lossOf(m, b, true, stepSeed); }, 2e-4);
    EXPECT_TRUE(gradNear(numeric, grads, 2e-2, 5e-4, numeric.size() * 15 / 100));
}

INSTANTIATE_TEST_SUITE_P(
    Model, ModelGradientTest,
    ::testing::Values(
        ChainCase{"convReluPoolFlattenDense", [] { return custom({conv(4, 3), relu, pool(2), flatten, dense(3)}); },
                  {1, 8, 8}},
        ChainCase{"paddedAndStridedConvs",
                  [] { return custom({conv(6, 3, 1, 1), relu, pool(2), conv(5, 2, 2, 1), relu, flatten, dense(3)}); },
                  {3, 8, 8}},
        ChainCase{"denseStraightAfterConv", [] { return custom({conv(8, 3, 2, 1), relu, dense(3)}); }, {1, 8, 8}},
        ChainCase{"overlappingPool", [] { return custom({conv(4, 3), relu, pool(3, 1), flatten, dense(6), relu, dense(3)}); },
                  {2, 7, 7}},
        ChainCase{"mlpWithDropout", [] { return custom({flatten, dense(16), relu, dropout(0.5f), dense(3)}); },
                  {1, 6, 6}}),
    CaseName());

// ---------------------------------------------------------------- plans, evaluation, determinism

TEST(Model, BatchSizeChangesGiveTheSameGradientsAsFreshModels) {
    CpuDevice dev(2);
    const ModelSpec spec = custom({conv(4, 3, 1, 1), relu, pool(2), conv(6, 3), relu, flatten, dense(3)});
    Model m(spec, {1, 8, 8}, 3, dev, 21);
    Batch b4 = randomBatch(m, 4, 1), b3 = randomBatch(m, 3, 2);
    for (Batch* b : {&b4, &b3, &b4, &b3}) {
        SCOPED_TRACE("batch " + std::to_string(b->n));
        Model fresh(spec, {1, 8, 8}, 3, dev, 21);
        const double want = forwardBackward(fresh, *b, 0);
        EXPECT_NEAR(forwardBackward(m, *b, 0), want, 1e-6);
        EXPECT_TRUE(allNear(Values(fresh.grads(), fresh.grads() + fresh.paramCount()),
                            Values(m.grads(), m.grads() + m.paramCount()), 1e-5, 1e-7));
    }
}

TEST(Model, EvaluationForwardMatchesTrainingForwardWithoutDropout) {
    CpuDevice dev(2);
    Model m(preset("cnn"), {1, 28, 28}, 10, dev, 4);
    Batch b = randomBatch(m, 5, 3);
    const Values train = toVector(m.forward(b.x.data(), b.n, true, 1), dev);
    const Values eval = toVector(m.forward(b.x.data(), b.n, false), dev);
    EXPECT_TRUE(allNear(train, eval, 1e-5, 1e-6));
}

TEST(Model, DropoutMaskFollowsTheStepSeed) {
    CpuDevice dev(1);
    Model m(custom({flatten, dense(32), relu, dropout(0.5f), dense(3)}), {1, 4, 4}, 3, dev, 4);
    Batch b = randomBatch(m, 6, 3);
    const Values s1 = toVector(m.forward(b.x.data(), b.n, true, 1), dev);
    EXPECT_EQ(toVector(m.forward(b.x.data(), b.n, true, 1), dev), s1);
    EXPECT_NE(toVector(m.forward(b.x.data(), b.n, true, 2), dev), s1);
    EXPECT_NE(toVector(m.forward(b.x.data(), b.n, false), dev), s1);
}

TEST(Model, SameSeedTrainsToBitwiseIdenticalParameters) {
    CpuDevice dev(2);
    const ModelSpec spec = custom({conv(8, 3, 1, 1), relu, pool(2), flatten, dense(16), relu, dropout(0.25f), dense(4)});
    OptimizerConfig oc;
    oc.kind = OptimizerKind::Adam;
    oc.learning_rate = 0.01f;
    auto train = [&](uint64_t seed) {
        Model m(spec, {2, 8, 8}, 4, dev, seed);
        auto opt = Optimizer::create(oc, m.paramCount());
        for (int64_t step = 1; step <= 5; ++step) {
            Batch b = randomBatch(m, 8, 100 + static_cast<uint64_t>(step));
            forwardBackward(m, b, static_cast<uint64_t>(step));
            opt->step(m.params(), m.grads(), m.paramCount(), step);
        }
        return Values(m.params(), m.params() + m.paramCount());
    };
    const Values a = train(3), b = train(3);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    Model untrained(spec, {2, 8, 8}, 4, dev, 3);
    EXPECT_NE(std::memcmp(a.data(), untrained.params(), a.size() * sizeof(float)), 0) << "training changed nothing";
}

}  // namespace
}  // namespace trainbench::engine
