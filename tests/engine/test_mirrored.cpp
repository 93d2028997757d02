// The mirrored strategy against one device: same seed, same global batches, the same loss curve up
// to float summation order; replicas that stay identical; the step's time split per replica.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "engine/data/pipeline/datasource.h"
#include "engine/strategy/mirroredstrategy.h"
#include "engine/train/trainer.h"

namespace trainbench::engine {
namespace {

class StepLog : public TrainObserver {
public:
    void onStep(const StepRecord& s) override { steps.push_back(s); }
    std::vector<StepRecord> steps;
};

bool haveFashionMnist() {
    return std::filesystem::exists(std::filesystem::path(DataConfig().path) / "train-images-idx3-ubyte.gz");
}

struct Job {
    DataConfig data;
    ModelSpec spec;
    OptimizerConfig optimizer;
    TrainConfig train;
};

Job setup(const char* preset, OptimizerKind kind, int64_t batch, int64_t steps) {
    Job s;
    s.data.train_limit = batch * steps;
    s.data.test_limit = 200;
    s.spec.preset = preset;
    s.spec.layers = presetLayers(preset);
    s.optimizer.kind = kind;
    s.optimizer.learning_rate = kind == OptimizerKind::Adam ? 1e-3f : 0.05f;
    s.optimizer.momentum = kind == OptimizerKind::SGD ? 0.9f : 0.0f;
    s.train.batch_size = batch;
    s.train.epochs = 0;
    s.train.max_steps = steps;
    s.train.eval_at_epoch_end = false;
    s.train.seed = 11;
    return s;
}

std::vector<StepRecord> runSingle(const Job& s, int threads, std::vector<float>* params = nullptr) {
    TrainingData d = openTrainingData(s.data, s.train.batch_size, s.train.seed);
    CpuDevice dev(threads);
    Model model(s.spec, {d.channels, d.height, d.width}, d.num_classes, dev, s.train.seed);
    auto opt = Optimizer::create(s.optimizer, model.paramCount());
    Trainer t(model, *opt, *d.train, d.test, s.train);
    StepLog log;
    t.run(log);
    if (params) params->assign(model.params(), model.params() + model.paramCount());
    return log.steps;
}

std::vector<StepRecord> runMirrored(const Job& s, int replicas, int threads, double bucketMb = 1.0,
                                    bool overlap = true, std::vector<float>* params = nullptr) {
    TrainingData d = openTrainingData(s.data, s.train.batch_size, s.train.seed);
    MirroredStrategy m({.model = s.spec, .sampleShape = {d.channels, d.height, d.width}, .numClasses = d.num_classes,
                        .optimizer = s.optimizer, .seed = s.train.seed, .threads = threads},
                       replicas, {.bucketMb = bucketMb, .overlap = overlap});
    Trainer t(m, *d.train, d.test, s.train);
    StepLog log;
    t.run(log);
    // Every replica applied the same update to the same parameters.
    for (int r = 1; r < replicas; ++r)
        EXPECT_EQ(std::memcmp(m.replicaModel(r).params(), m.model().params(),
                              static_cast<size_t>(m.model().paramCount()) * sizeof(float)),
                  0)
            << "replica " << r << " drifted from replica 0";
    if (params) params->assign(m.model().params(), m.model().params() + m.model().paramCount());
    return log.steps;
}

double maxRelativeDifference(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
    EXPECT_EQ(a.size(), b.size());
    double worst = 0.0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        worst = std::max(worst, std::abs(a[i].loss - b[i].loss) / std::abs(a[i].loss));
    return worst;
}

TEST(Mirrored, LossCurveMatchesOneDeviceOnTheGlobalBatch) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    for (OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::SGD}) {
        const Job s = setup("mlp", kind, 64, 50);
        const std::vector<StepRecord> single = runSingle(s, 1);
        ASSERT_EQ(single.size(), 50u);
        for (int replicas : {2, 4}) {
            const std::vector<StepRecord> mirrored = runMirrored(s, replicas, 1);
            const double diff = maxRelativeDifference(single, mirrored);
            std::printf("%s, %d replicas: max relative loss difference over 50 steps %.3g\n",
                        kind == OptimizerKind::Adam ? "adam" : "sgd", replicas, diff);
            EXPECT_LT(diff, 1e-5) << replicas << " replicas";
        }
    }
}

TEST(Mirrored, ConvolutionalModelToo) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    const Job s = setup("cnn", OptimizerKind::Adam, 32, 20);
    // Convolution weight gradients sum over every pixel of every example, so halving the batch
    // reorders more of the sum than for dense layers: 1.8e-5 after 20 Adam steps here.
    const double diff = maxRelativeDifference(runSingle(s, 1), runMirrored(s, 2, 1));
    EXPECT_LT(diff, 1e-4);
}

// One replica is one device: bit for bit the same run.
TEST(Mirrored, OneReplicaIsExactlyOneDevice) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    const Job s = setup("mlp", OptimizerKind::Adam, 32, 10);
    std::vector<float> a, b;
    const auto single = runSingle(s, 1, &a);
    const auto mirrored = runMirrored(s, 1, 1, 1.0, true, &b);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    for (size_t i = 0; i < single.size(); ++i) EXPECT_EQ(single[i].loss, mirrored[i].loss) << "step " << i + 1;
}

// How gradients are bucketed, and whether reduction overlaps backward, changes timing, never values:
// each element is summed in rank order either way.
TEST(Mirrored, BucketingAndOverlapDoNotChangeTheResult) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    const Job s = setup("mlp", OptimizerKind::Adam, 32, 8);
    std::vector<float> reference, other;
    runMirrored(s, 2, 1, 1.0, true, &reference);
    for (const auto& [bucketMb, overlap] : {std::pair{0.0, true}, std::pair{100.0, true}, std::pair{0.0, false}}) {
        runMirrored(s, 2, 1, bucketMb, overlap, &other);
        EXPECT_EQ(std::memcmp(reference.data(), other.data(), reference.size() * sizeof(float)), 0)
            << "bucket " << bucketMb << " MB, overlap " << overlap;
    }
}

// Global batches that do not split evenly, and a last batch with fewer examples than replicas.
TEST(Mirrored, UnevenAndTinyBatches) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    Job s = setup("mlp", OptimizerKind::SGD, 10, 0);
    s.data.train_limit = 32;  // batches of 10, 10, 10, 2
    s.train.max_steps = 0;
    s.train.epochs = 2;
    const auto single = runSingle(s, 1);
    const auto mirrored = runMirrored(s, 4, 1);
    ASSERT_EQ(mirrored.size(), 8u);
    EXPECT_LT(maxRelativeDifference(single, mirrored), 1e-5);
    for (const StepRecord& r : mirrored) {
        ASSERT_EQ(r.replicas.size(), 4u);
        int64_t samples = 0;
        for (const ReplicaStep& rep : r.replicas) samples += rep.samples;
        EXPECT_EQ(samples, r.samples);
    }
    const StepRecord& last = mirrored[3];
    EXPECT_EQ(last.samples, 2);
    EXPECT_EQ(last.replicas[0].samples + last.replicas[2].samples, 0) << "2 examples go to replicas 1 and 3";
}

TEST(Mirrored, StepRecordsSplitComputeCommunicationAndWait) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    const Job s = setup("mlp", OptimizerKind::Adam, 64, 5);
    for (const StepRecord& r : runMirrored(s, 2, 1, 0.0)) {
        ASSERT_EQ(r.replicas.size(), 2u);
        for (int k = 0; k < 2; ++k) {
            const ReplicaStep& rep = r.replicas[static_cast<size_t>(k)];
            EXPECT_EQ(rep.rank, k);
            EXPECT_EQ(rep.samples, 32);
            EXPECT_GT(rep.compute_seconds, 0.0);
            EXPECT_GT(rep.comm_seconds, 0.0);
            EXPECT_GE(rep.wait_seconds, 0.0);
            EXPECT_LE(rep.compute_seconds, r.step_seconds * 1.001);
        }
        EXPECT_DOUBLE_EQ(r.comm_seconds, (r.replicas[0].comm_seconds + r.replicas[1].comm_seconds) / 2);
    }
}

// A replica that fails (here: a label outside the classes in its rows) fails the step with its
// error, without leaving the others waiting in a reduction; the next step runs.
TEST(Mirrored, AFailingReplicaFailsTheStepWithoutHanging) {
    ModelSpec spec;
    spec.preset = "mlp";
    spec.layers = presetLayers("mlp");
    MirroredStrategy m({.model = spec, .sampleShape = {1, 28, 28}, .numClasses = 10, .optimizer = OptimizerConfig{},
                        .seed = 3, .threads = 1},
                       2, {.bucketMb = 0.0, .overlap = true});
    m.bindThreads();
    std::vector<float> x(8 * 784, 0.5f);
    std::vector<int32_t> y = {0, 1, 2, 3, 4, 5, 6, 12};  // the last row is replica 1's
    BatchView b{x.data(), y.data(), 8};
    try {
        m.step(b, 1, 1, {});
        ADD_FAILURE() << "no error for label 12";
    } catch (const std::out_of_range& e) {
        EXPECT_NE(std::string(e.what()).find("label 12"), std::string::npos) << e.what();
    }
    y[7] = 7;
    std::fill(x.begin(), x.end(), 0.5f);
    const StrategyStep ok = m.step(b, 2, 2, {});
    EXPECT_TRUE(std::isfinite(ok.loss));
}

}  // namespace
}  // namespace trainbench::engine
