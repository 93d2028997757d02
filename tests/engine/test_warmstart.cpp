// A warm start takes another run's parameters and batch norm statistics bit for bit, with a fresh
// optimizer by default or the carried one (which then goes on exactly as if the source had not
// stopped); a checkpoint of another model is refused naming the first layer that differs, before
// anything is overwritten.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/checkpoint/modellayout.h"
#include "engine/checkpoint/trainingcheckpoint.h"
#include "engine/checkpoint/warmstart.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/strategy/mirroredstrategy.h"
#include "tests/engine/modelspecs.h"
#include "tests/engine/tempdirtest.h"
#include "tests/engine/optimizerconfigs.h"

namespace trainbench::engine {
namespace {

using test::adam;

using namespace testmodels;
using testref::Values;
using test::errorOf;

const Dims kWarmShape{1, 6, 6};
constexpr int64_t kWarmClasses = 3;

// conv (no bias) -> batch norm -> ReLU -> flatten -> dense 3: parameters and running statistics.
ModelSpec withBatchNorm(int filters = 4, int padding = 1) {
    return custom({conv(filters, 3, 1, padding, false), of(LayerKind::BatchNorm), relu, flatten, dense(kWarmClasses)});
}

// Forward and backward on the batch of `batchSeed`; grads() then hold its gradients.
void gradients(Model& m, uint64_t batchSeed) {
    Batch b = randomBatch(m, 8, batchSeed);
    Tensor& logits = m.forward(b.x.data(), b.n, /*training=*/true);
    Tensor g(Tensor::plainDesc({b.n, kWarmClasses}), m.device().engine());
    m.device().stream().wait();
    SoftmaxCrossEntropy::compute(logits, b.y.data(), &g);
    m.backward(g);
    m.device().stream().wait();
}

// Run steps first..last, step i on the batch of seed batchSeed0 + i.
void train(Model& m, Optimizer& opt, int64_t first, int64_t last, uint64_t batchSeed0) {
    for (int64_t step = first; step <= last; ++step) {
        gradients(m, batchSeed0 + static_cast<uint64_t>(step));
        opt.step(m.params(), m.grads(), m.paramCount(), step);
    }
}

Values paramsOf(const Model& m) { return Values(m.params(), m.params() + m.paramCount()); }
Values stateOf(const Model& m) { return Values(m.state().begin(), m.state().end()); }
bool bitIdentical(const Values& a, const Values& b) {
    // memcmp may not be given the null data() of an empty vector, even for 0 bytes.
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

class WarmStart : public test::TempDirTest {
protected:
    // A checkpoint as trainbench-cli run writes it: training shards plus the model's layout.
    std::string save(const std::string& name, Model& m, Optimizer& opt) {
        CheckpointWriter w;
        saveTraining(w, m.params(), m.paramCount(), opt, m.state());
        saveModelLayout(w, m);
        w.commit(path(name));
        return path(name);
    }
};

TEST_F(WarmStart, TakesTheSourceParametersAndRunningStatisticsBitForBitWithAFreshOptimizer) {
    CpuDevice dev(1);
    Model source(withBatchNorm(), kWarmShape, kWarmClasses, dev, 1);
    auto sourceOpt = Optimizer::create(adam(), source.paramCount());
    train(source, *sourceOpt, 1, 3, 100);
    ASSERT_NE(stateOf(source)[0], 0.0f) << "training moved the running mean off its start";
    const Checkpoint ck = Checkpoint::read(save("a.ckpt", source, *sourceOpt));

    Model warm(withBatchNorm(), kWarmShape, kWarmClasses, dev, 2);  // other initial parameters
    ASSERT_FALSE(bitIdentical(paramsOf(warm), paramsOf(source)));
    auto opt = Optimizer::create(adam(), warm.paramCount());
    warmStartFrom(ck, warm, *opt, {});
    EXPECT_TRUE(bitIdentical(paramsOf(warm), paramsOf(source)));
    EXPECT_TRUE(bitIdentical(stateOf(warm), stateOf(source)));
    for (const OptimizerStateSpan& s : opt->state())
        for (float v : s.values) ASSERT_EQ(v, 0.0f) << s.name << ": a fresh optimizer has no moments";
    EXPECT_EQ(opt->stepsBefore(), 0);

    // Adam's first step from fresh moments moves every parameter by lr * g / (|g| + eps): the size
    // of the learning rate wherever the gradient is not tiny. Carried moments would not.
    gradients(warm, 7);
    const Values g(warm.grads(), warm.grads() + warm.paramCount());
    const Values before = paramsOf(warm);
    opt->step(warm.params(), warm.grads(), warm.paramCount(), 1);
    const double lr = 0.01, eps = 1e-7;
    for (size_t i = 0; i < g.size(); ++i)
        ASSERT_NEAR(warm.params()[i] - before[i], -lr * g[i] / (std::fabs(g[i]) + eps), 1e-6) << "parameter " << i;
}

TEST_F(WarmStart, ACarriedOptimizerGoesOnExactlyAsIfTheSourceHadNotStopped) {
    CpuDevice dev(1);
    // Warm-up over 5 steps and Adam's bias correction both depend on the count of updates.
    Model source(withBatchNorm(), kWarmShape, kWarmClasses, dev, 1);
    auto sourceOpt = Optimizer::create(adam(5), source.paramCount());
    train(source, *sourceOpt, 1, 3, 100);
    const Checkpoint ck = Checkpoint::read(save("a.ckpt", source, *sourceOpt));
    train(source, *sourceOpt, 4, 6, 100);  // the source goes on: steps 4..6

    // The warm run counts its own steps 1..3, on the batches the source used for 4..6.
    Model warm(withBatchNorm(), kWarmShape, kWarmClasses, dev, 2);
    auto opt = Optimizer::create(adam(5), warm.paramCount());
    warmStartFrom(ck, warm, *opt, {.carry_optimizer = true, .optimizer_steps = 3});
    EXPECT_EQ(opt->learningRate(1), sourceOpt->learningRate(4));
    train(warm, *opt, 1, 3, 103);
    EXPECT_TRUE(bitIdentical(paramsOf(warm), paramsOf(source)));
    EXPECT_TRUE(bitIdentical(stateOf(warm), stateOf(source)));

    // The moments without their count of updates give another run.
    Model uncounted(withBatchNorm(), kWarmShape, kWarmClasses, dev, 2);
    auto opt2 = Optimizer::create(adam(5), uncounted.paramCount());
    warmStartFrom(ck, uncounted, *opt2, {.carry_optimizer = true, .optimizer_steps = 0});
    train(uncounted, *opt2, 1, 3, 103);
    EXPECT_FALSE(bitIdentical(paramsOf(uncounted), paramsOf(source)));
}

TEST_F(WarmStart, AFreshOptimizerMayBeAnotherKindACarriedOneMayNot) {
    CpuDevice dev(1);
    Model source(withBatchNorm(), kWarmShape, kWarmClasses, dev, 1);
    auto sourceOpt = Optimizer::create(adam(), source.paramCount());
    train(source, *sourceOpt, 1, 2, 100);
    const std::string file = save("adam.ckpt", source, *sourceOpt);

    OptimizerConfig sgd;
    sgd.kind = OptimizerKind::SGD;
    sgd.momentum = 0.9f;
    Model warm(withBatchNorm(), kWarmShape, kWarmClasses, dev, 2);
    auto opt = Optimizer::create(sgd, warm.paramCount());
    const Values start = paramsOf(warm);
    EXPECT_EQ(errorOf([&] { warmStartFrom(Checkpoint::read(file), warm, *opt, {.carry_optimizer = true}); }),
              file + ": the checkpoint holds optimizer state {adam.m, adam.v}, this optimizer keeps {sgd.momentum}");
    EXPECT_TRUE(bitIdentical(paramsOf(warm), start)) << "a refused warm start leaves the model as it was";
    warmStartFrom(Checkpoint::read(file), warm, *opt, {});  // fine-tuning with another optimizer
    EXPECT_TRUE(bitIdentical(paramsOf(warm), paramsOf(source)));
}

TEST_F(WarmStart, AnotherModelIsRefusedNamingTheFirstLayerThatDiffers) {
    CpuDevice dev(1);
    auto refusal = [&](const ModelSpec& saved, const ModelSpec& loaded) {
        Model s(saved, kWarmShape, kWarmClasses, dev, 1);
        auto so = Optimizer::create(adam(), s.paramCount());
        const std::string file = save("m.ckpt", s, *so);
        Model m(loaded, kWarmShape, kWarmClasses, dev, 2);
        auto o = Optimizer::create(adam(), m.paramCount());
        const Values start = paramsOf(m), startState = stateOf(m);
        const std::string e = errorOf([&] { warmStartFrom(Checkpoint::read(file), m, *o, {}); });
        EXPECT_TRUE(bitIdentical(paramsOf(m), start) && bitIdentical(stateOf(m), startState)) << "nothing is overwritten";
        const std::string head = file + ": the checkpoint holds another model: ";
        EXPECT_EQ(e.rfind(head, 0), 0u) << e;
        return e.substr(std::min(e.size(), head.size()));
    };
    // A wider hidden layer: 36 -> 8 (296 values) against 36 -> 16 (592).
    EXPECT_EQ(refusal(custom({flatten, dense(8), relu, dense(kWarmClasses)}), custom({flatten, dense(16), relu, dense(kWarmClasses)})),
              "layer 1 (dense): checkpoint has 296 parameters, this model has 592");
    // The same parameter count in another shape: padding changes the convolution's output.
    EXPECT_EQ(refusal(withBatchNorm(4, 0), withBatchNorm(4, 1)),
              "layer 0 (conv2d): checkpoint maps 1x6x6 to 4x4x4, this model 1x6x6 to 4x6x6");
    EXPECT_EQ(refusal(custom({flatten, dense(kWarmClasses)}), withBatchNorm()),
              "layer 0: checkpoint has a flatten layer, this model a conv2d");
    // Equal parameter buffers that a size check alone would take: one more layer without parameters.
    EXPECT_EQ(refusal(custom({flatten, dense(kWarmClasses)}), custom({flatten, dense(kWarmClasses), relu})),
              "checkpoint has 2 layers, this model has 3 (the first 2 agree)");
}

TEST_F(WarmStart, AnUnreadableLayoutIsNamedWithItsLine) {
    CpuDevice dev(1);
    Model m(withBatchNorm(), kWarmShape, kWarmClasses, dev, 1);
    auto opt = Optimizer::create(adam(), m.paramCount());
    CheckpointWriter w;
    saveTraining(w, m.params(), m.paramCount(), *opt, m.state());
    const std::string layout = "conv2d 36 0 1x6x6 4x6x6\ndense many 0 144 3\n";
    w.add(kModelLayoutShard, layout.data(), layout.size());
    w.commit(path("bad.ckpt"));
    EXPECT_EQ(errorOf([&] { warmStartFrom(Checkpoint::read(path("bad.ckpt")), m, *opt, {}); }),
              path("bad.ckpt") + ": shard 'model.layout' line 2 is not '<kind> <params> <state> <in shape> <out "
                                 "shape>': \"dense many 0 144 3\"");
}

TEST_F(WarmStart, EveryMirroredReplicaStartsFromTheCheckpoint) {
    CpuDevice dev(1);
    Model source(withBatchNorm(), kWarmShape, kWarmClasses, dev, 1);
    auto sourceOpt = Optimizer::create(adam(), source.paramCount());
    train(source, *sourceOpt, 1, 2, 100);
    const Checkpoint ck = Checkpoint::read(save("a.ckpt", source, *sourceOpt));
    MirroredStrategy mirrored({.model = withBatchNorm(), .sampleShape = kWarmShape, .numClasses = kWarmClasses,
                               .optimizer = adam(), .seed = 5, .threads = 1},
                              2);
    mirrored.warmStart(ck, {});
    for (int r = 0; r < 2; ++r) {
        EXPECT_TRUE(bitIdentical(paramsOf(mirrored.replicaModel(r)), paramsOf(source))) << "replica " << r;
        EXPECT_TRUE(bitIdentical(stateOf(mirrored.replicaModel(r)), stateOf(source))) << "replica " << r;
    }
}

}  // namespace
}  // namespace trainbench::engine
