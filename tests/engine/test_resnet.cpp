// Residual models: the resnet50 preset has torchvision's parameter count, resnet_small trains on real
// Fashion-MNIST, gradients of whole chains with batch norm and bottlenecks match finite differences,
// statistics shards equal one model per shard, and models that do not fit their input say where.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include "engine/data/pipeline/datasource.h"
#include "engine/layers/batchnorm.h"
#include "engine/layers/relu.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "engine/train/trainer.h"
#include "engine/util/errors.h"
#include "tests/engine/modelspecs.h"
#include "tests/engine/reference.h"

namespace trainbench::engine {
namespace {

using namespace testref;
using namespace testmodels;

LayerSpec pool(int size, int stride, int padding) {
    LayerSpec s = of(LayerKind::MaxPool2D); s.kernel = size; s.stride = stride; s.padding = padding; return s;
}
LayerSpec bottleneck(int width, int stride) {
    LayerSpec s = of(LayerKind::Bottleneck); s.filters = width; s.stride = stride; return s;
}
const LayerSpec bn = of(LayerKind::BatchNorm), gap = of(LayerKind::GlobalAvgPool);

double lossOf(Model& m, Batch& b) {
    Tensor& logits = m.forward(b.x.data(), b.n, true);
    m.device().stream().wait();
    return SoftmaxCrossEntropy::compute(logits, b.y.data(), nullptr).loss;
}

double forwardBackward(Model& m, Batch& b) {
    Tensor& logits = m.forward(b.x.data(), b.n, true);
    Tensor grad(Tensor::plainDesc({b.n, m.numClasses()}), m.device().engine());
    m.device().stream().wait();
    const double loss = SoftmaxCrossEntropy::compute(logits, b.y.data(), &grad).loss;
    m.backward(grad);
    m.device().stream().wait();
    return loss;
}

// ---------------------------------------------------------------- presets

// torchvision.models.resnet50(): 25,557,032 parameters (convolutions without bias, batch norm with
// gamma and beta, dense 2048 -> 1000 with bias); its batch norms keep 2 x 26,560 running values.
TEST(ResNet, Resnet50HasTorchvisionsParameterCount) {
    CpuDevice dev(1);
    Model m(preset("resnet50"), {3, 224, 224}, 1000, dev, 1);
    EXPECT_EQ(m.paramCount(), 25557032);
    EXPECT_EQ(m.state().size(), 2u * 26560u);
    EXPECT_EQ(m.layers().back()->outputShape(), (Dims{1000}));
    // The stem takes 224x224 to 56x56 (conv 7x7/2 pad 3, then max pool 3x3/2 pad 1); the last stage
    // runs at 7x7 with 2048 channels.
    EXPECT_EQ(m.layers()[3]->outputShape(), (Dims{64, 56, 56}));
    EXPECT_EQ(m.layers()[m.layers().size() - 3]->outputShape(), (Dims{2048, 7, 7}));
    // The head follows the data set's classes.
    Model ten(preset("resnet50"), {3, 224, 224}, 10, dev, 1);
    EXPECT_EQ(ten.paramCount(), 25557032 - 990 * (2048 + 1));
}

// The whole of ResNet-50 runs forward and backward (every stage, stride and projection) on small
// images (32x32: the last stage at 1x1), and every layer gets a finite, non-zero gradient. (Its
// gradients are not checked against finite differences here: at this size the last stages normalise
// over 4 values per channel, the gradients grow by orders of magnitude towards the input, and a float
// step small enough for the loss to stay linear is below the parameters' resolution. The chains and
// blocks above are checked instead.)
TEST(ResNet, Resnet50RunsForwardAndBackwardOnSmallImages) {
    CpuDevice dev(1);
    Model m(preset("resnet50"), {3, 32, 32}, 5, dev, 1);
    EXPECT_EQ(m.layers()[m.layers().size() - 3]->outputShape(), (Dims{2048, 1, 1}));
    Batch b = randomBatch(m, 4, 2);
    const double loss = forwardBackward(m, b);
    EXPECT_TRUE(std::isfinite(loss));
    EXPECT_EQ(m.gradientSpans().size(), 1u + 1u + 16u + 1u) << "stem conv, stem batch norm, 16 blocks, dense";
    for (const auto& [offset, count] : m.gradientSpans()) {
        double norm = 0.0;
        for (int64_t i = offset; i < offset + count; ++i) norm += std::abs(m.grads()[i]);
        EXPECT_TRUE(std::isfinite(norm) && norm > 0.0) << "gradient of the parameters at " << offset << ": " << norm;
    }
}

TEST(ResNet, ResnetSmallFitsFashionMnist) {
    CpuDevice dev(1);
    Model m(preset("resnet_small"), {1, 28, 28}, 10, dev, 1);
    EXPECT_EQ(m.layers().back()->outputShape(), (Dims{10}));
    // stem conv 3x3 1->16 + BN; bottleneck 16 (16 -> 64, stride 2, projection); bottleneck 16 (64,
    // identity); bottleneck 32 (64 -> 128, stride 2, projection); dense 128 -> 10.
    const int64_t stem = 9 * 16 + 2 * 16;
    const int64_t block1 = 16 * 16 + 9 * 16 * 16 + 16 * 64 + 16 * 64 + 2 * (16 + 16 + 64 + 64);
    const int64_t block2 = 64 * 16 + 9 * 16 * 16 + 16 * 64 + 2 * (16 + 16 + 64);
    const int64_t block3 = 64 * 32 + 9 * 32 * 32 + 32 * 128 + 64 * 128 + 2 * (32 + 32 + 128 + 128);
    EXPECT_EQ(m.paramCount(), stem + block1 + block2 + block3 + 128 * 10 + 10);
    EXPECT_EQ(m.layers()[5]->outputShape(), (Dims{128, 7, 7}));
}

// ---------------------------------------------------------------- build errors name the layer

void expectModelError(const ModelSpec& spec, const Dims& sample, const std::string& message) {
    CpuDevice dev(1);
    try {
        Model m(spec, sample, 10, dev, 1);
        ADD_FAILURE() << "the model was built";
    } catch (const ModelError& e) {
        EXPECT_EQ(std::string(e.what()), message);
    }
}

TEST(ResNet, LayersThatNeedAnImageNameTheirIndexAndWhatTheyGot) {
    expectModelError(custom({flatten, bottleneck(4, 1), gap, dense(10)}), {1, 28, 28},
                     "layer 1 (bottleneck) needs a [channels, height, width] input but gets 784 (is it after a "
                     "flatten, dense or global_avg_pool layer?)");
    expectModelError(custom({conv(8, 3), gap, gap, dense(10)}), {1, 28, 28},
                     "layer 2 (global_avg_pool) needs a [channels, height, width] input but gets 8 (is it after a "
                     "flatten, dense or another global_avg_pool layer?)");
    expectModelError(custom({conv(8, 3), pool(3, 2, 2), gap, dense(10)}), {1, 28, 28},
                     "layer 1: maxpool2d padding 2 must be between 0 and half the window (3)");
    expectModelError(custom({conv(8, 3), bottleneck(0, 1), gap, dense(10)}), {1, 28, 28},
                     "layer 1 (bottleneck): filters must be positive, got 0");
}

// ---------------------------------------------------------------- gradients through whole chains

struct ChainCase {
    const char* name;
    std::vector<LayerSpec> layers;
    Dims sample;
};

class ResNetGradientTest : public ::testing::TestWithParam<ChainCase> {};

// As test_model.cpp's chains: float forwards put ~1e-4 of noise on a slope with a step of 1e-3;
// ReLU and pooling kinks crossed by a step are detected and skipped (at most 15 %).
TEST_P(ResNetGradientTest, GradientsMatchFiniteDifferencesOfTheLoss) {
    const ChainCase& c = GetParam();
    CpuDevice dev(1);
    Model m(custom(c.layers), c.sample, 3, dev, 5);
    Rng rng(6);
    for (int64_t i = 0; i < m.paramCount(); ++i)  // beta and biases off zero, gamma off one
        m.params()[i] += rng.uniform(-0.1f, 0.1f);
    Batch b = randomBatch(m, 4, 9);
    std::fill(m.grads(), m.grads() + m.paramCount(), 1e6f);
    forwardBackward(m, b);
    const Values grads(m.grads(), m.grads() + m.paramCount());
    const Doubles numeric = centralDiffs(m.params(), static_cast<size_t>(m.paramCount()), 1e-3f,
                                         [&] { return lossOf(m, b); }, 2e-4);
    EXPECT_TRUE(gradNear(numeric, grads, 2e-2, 5e-4, numeric.size() * 15 / 100));
}

INSTANTIATE_TEST_SUITE_P(
    ResNet, ResNetGradientTest,
    ::testing::Values(
        // BN -> ReLU runs as one primitive (the ReLU's gradient applied by the BN's backward).
        ChainCase{"convBnReluBottleneck",
                  {conv(4, 3, 1, 1, false), bn, relu, bottleneck(1, 1), gap, dense(3)}, {1, 6, 6}},
        // ResNet's stem: BN -> ReLU -> padded max pool (run as BN -> pool with a fused ReLU).
        ChainCase{"stemThenProjectionBlock",
                  {conv(4, 3, 1, 1, false), bn, relu, pool(3, 2, 1), bottleneck(2, 2), gap, dense(3)}, {2, 8, 8}},
        ChainCase{"batchNormAfterDense", {flatten, dense(6), bn, relu, dense(3)}, {1, 4, 4}}),
    CaseName());

TEST(ResNet, BatchNormFollowedByReluFusesBothDirections) {
    CpuDevice dev(1);
    Model m(custom({conv(4, 3, 1, 1, false), bn, relu, gap, dense(3)}), {1, 6, 6}, 3, dev, 1);
    auto* r = dynamic_cast<ReLU*>(m.layers()[2].get());
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(r->fusedIntoPrevious());
    EXPECT_EQ(m.layers()[1]->describe(), "BatchNorm(4, momentum 0.99, epsilon 0.001, then ReLU)");
}

// ---------------------------------------------------------------- statistics shards

// n cores each holding 1/n of the global batch, each normalising its own part: one model with n
// statistics shards gives each shard's logits as a model of its own does, the gradient of the mean
// loss (the mean of the shard means) equals the mean of the shard models' gradients, and the running
// statistics are the mean of theirs.
TEST(ResNet, StatisticsShardsEqualOneModelPerShard) {
    CpuDevice dev(1);
    const ModelSpec spec = custom({conv(4, 3, 1, 1, false), bn, relu, bottleneck(2, 2), gap, dense(3)});
    const int shards = 4;
    const int64_t per = 2;
    Model whole(spec, {1, 6, 6}, 3, dev, 3);
    whole.setStatisticsShards(shards);
    Batch b = randomBatch(whole, shards * per, 4);
    const Values logits = toVector(whole.forward(b.x.data(), b.n, true), dev);
    Tensor gradLogits(Tensor::plainDesc({b.n, 3}), dev.engine());
    SoftmaxCrossEntropy::compute(logits.data(), b.n, 3, b.y.data(), gradLogits.data());
    whole.backward(gradLogits);
    dev.stream().wait();
    const Values wholeGrads(whole.grads(), whole.grads() + whole.paramCount());

    Doubles meanGrads(wholeGrads.size(), 0.0), meanState(whole.state().size(), 0.0);
    const int64_t sampleSize = product(whole.sampleShape());
    for (int k = 0; k < shards; ++k) {
        SCOPED_TRACE("shard " + std::to_string(k));
        Model one(spec, {1, 6, 6}, 3, dev, 3);
        Batch s{per,
                Values(b.x.begin() + k * per * sampleSize, b.x.begin() + (k + 1) * per * sampleSize),
                std::vector<int32_t>(b.y.begin() + k * per, b.y.begin() + (k + 1) * per)};
        const Values shardLogits = toVector(one.forward(s.x.data(), per, true), dev);
        EXPECT_TRUE(allNear(shardLogits, Values(logits.begin() + k * per * 3, logits.begin() + (k + 1) * per * 3),
                            1e-5, 1e-6));
        forwardBackward(one, s);  // a second forward: the running statistics move twice, as below
        for (size_t i = 0; i < meanGrads.size(); ++i) meanGrads[i] += one.grads()[i] / shards;
        for (size_t i = 0; i < meanState.size(); ++i) meanState[i] += one.state()[i] / shards;
    }
    EXPECT_TRUE(allNear(meanGrads, wholeGrads, 1e-4, 1e-6)) << "gradients";
    whole.forward(b.x.data(), b.n, true);  // the second training forward of the whole batch
    dev.stream().wait();
    EXPECT_TRUE(allNear(meanState, Values(whole.state().begin(), whole.state().end()), 1e-5, 1e-6))
        << "running statistics";
}

TEST(ResNet, StatisticsShardsNeedABatchTheyDivide) {
    CpuDevice dev(1);
    Model m(custom({conv(4, 3, 1, 1, false), bn, relu, gap, dense(3)}), {1, 6, 6}, 3, dev, 1);
    m.setStatisticsShards(4);
    Batch b = randomBatch(m, 6, 1);
    try {
        m.forward(b.x.data(), b.n, true);
        ADD_FAILURE() << "6 examples cannot make 4 equal shards";
    } catch (const ModelError& e) {
        EXPECT_STREQ(e.what(), "a training batch of 6 examples does not split into 4 equal statistics shards "
                               "(one per core)");
    }
    EXPECT_NO_THROW(m.forward(b.x.data(), b.n, false)) << "evaluation uses the running statistics, unsharded";
    EXPECT_THROW(m.setStatisticsShards(0), ModelError);
}

// ---------------------------------------------------------------- real training

class StepLog : public TrainObserver {
public:
    void onStep(const StepRecord& s) override { steps.push_back(s); }
    std::vector<StepRecord> steps;
};

// resnet_small on real Fashion-MNIST with Adam: the mean loss of the last 10 of 60 steps is well
// below that of the first 10 (chance is ln 10 = 2.30). The test set, evaluated with the running
// statistics at the end (settled: the preset's momentum is 0.9), is classified far better than
// chance (10 %).
TEST(ResNet, ResnetSmallLearnsFashionMnist) {
    DataConfig data;
    if (!std::filesystem::exists(std::filesystem::path(data.path) / "train-images-idx3-ubyte.gz"))
        GTEST_SKIP() << "dataset-fashion-mnist not installed";
    const int64_t batch = 32, steps = 60;
    data.train_limit = batch * steps;
    data.test_limit = 500;
    TrainConfig train;
    train.batch_size = batch;
    train.epochs = 0;
    train.max_steps = steps;
    train.eval_at_epoch_end = false;
    train.seed = 5;
    TrainingData d = openTrainingData(data, batch, train.seed);
    CpuDevice dev(1);  // one thread: OpenMP barriers stall badly when other jobs share the cores
    Model model(preset("resnet_small"), {d.channels, d.height, d.width}, d.num_classes, dev, train.seed);
    OptimizerConfig oc;
    oc.kind = OptimizerKind::Adam;
    oc.learning_rate = 3e-3f;
    auto opt = Optimizer::create(oc, model.paramCount());
    Trainer t(model, *opt, *d.train, d.test, train);
    StepLog log;
    t.run(log);
    ASSERT_EQ(log.steps.size(), static_cast<size_t>(steps));
    double first = 0, last = 0;
    for (int i = 0; i < 10; ++i) {
        first += log.steps[static_cast<size_t>(i)].loss / 10;
        last += log.steps[log.steps.size() - 1 - static_cast<size_t>(i)].loss / 10;
    }
    std::printf("resnet_small: mean loss of the first 10 steps %.3f, of the last 10 %.3f\n", first, last);
    EXPECT_LT(last, 0.6 * first);
    const EvalRecord eval = t.evaluate(steps, 0);
    std::printf("resnet_small after %lld steps: test accuracy %.3f\n", static_cast<long long>(steps), eval.accuracy);
    EXPECT_GT(eval.accuracy, 0.4);
}

}  // namespace
}  // namespace trainbench::engine
