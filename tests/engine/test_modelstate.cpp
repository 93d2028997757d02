// Batch norm's running statistics survive checkpoints: a model restored from a checkpoint evaluates
// exactly as the one saved; a checkpoint without them does not restore into a model with batch norm
// (and says what is missing), while checkpoints of models without batch norm stay as they were.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/checkpoint/trainingcheckpoint.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "tests/engine/reference.h"
#include "tests/engine/tempdirtest.h"
#include "tests/engine/optimizerconfigs.h"

namespace trainbench::engine {
namespace {

using test::adam;

using namespace testref;
using test::errorOf;
using test::TempDirTest;

LayerSpec of(LayerKind k) { LayerSpec s; s.kind = k; return s; }
ModelSpec withBatchNorm() {
    LayerSpec conv = of(LayerKind::Conv2D);
    conv.filters = 4;
    conv.padding = 1;
    conv.bias = false;
    LayerSpec block = of(LayerKind::Bottleneck);
    block.filters = 2;
    block.stride = 2;
    LayerSpec dense = of(LayerKind::Dense);
    dense.units = 3;
    return {"", {conv, of(LayerKind::BatchNorm), of(LayerKind::ReLU), block, of(LayerKind::GlobalAvgPool), dense}, {}, {}, {}};
}
ModelSpec withoutBatchNorm() {
    LayerSpec dense = of(LayerKind::Dense);
    dense.units = 3;
    return {"", {of(LayerKind::Flatten), dense}, {}, {}, {}};
}

// A few training steps on random data: parameters and running statistics move off their start.
void train(Model& m, Optimizer& opt, int steps) {
    for (int step = 1; step <= steps; ++step) {
        const Values x = randomValues(8 * product(m.sampleShape()), 100 + static_cast<uint64_t>(step), -1.0f, 2.0f);
        Values xs = x;
        std::vector<int32_t> y;
        for (int i = 0; i < 8; ++i) y.push_back(i % 3);
        Tensor& logits = m.forward(xs.data(), 8, true);
        Tensor g(Tensor::plainDesc({8, 3}), m.device().engine());
        m.device().stream().wait();
        SoftmaxCrossEntropy::compute(logits, y.data(), &g);
        m.backward(g);
        m.device().stream().wait();
        opt.step(m.params(), m.grads(), m.paramCount(), step);
    }
}

Values evalLogits(Model& m) {
    Values x = randomValues(5 * product(m.sampleShape()), 7);
    return toVector(m.forward(x.data(), 5, false), m.device());
}

class ModelStateCheckpoint : public TempDirTest {};

TEST_F(ModelStateCheckpoint, RestoredModelEvaluatesExactlyAsTheSavedOne) {
    CpuDevice dev(1);
    Model saved(withBatchNorm(), {1, 6, 6}, 3, dev, 1);
    auto opt = Optimizer::create(adam(), saved.paramCount());
    train(saved, *opt, 3);
    ASSERT_FALSE(saved.state().empty());
    ASSERT_NE(saved.state()[0], 0.0f) << "training moves the running mean off 0";
    CheckpointWriter w;
    saveTraining(w, saved.params(), saved.paramCount(), *opt, saved.state());
    w.commit(path("bn.ckpt"));

    Model restored(withBatchNorm(), {1, 6, 6}, 3, dev, 99);  // other initial parameters
    auto opt2 = Optimizer::create(adam(), restored.paramCount());
    restoreTraining(Checkpoint::read(path("bn.ckpt")), restored.params(), restored.paramCount(), *opt2,
                    restored.state());
    EXPECT_EQ(std::memcmp(restored.state().data(), saved.state().data(), saved.state().size_bytes()), 0);
    EXPECT_EQ(evalLogits(restored), evalLogits(saved)) << "same parameters and running statistics, same logits";

    Model warm(withBatchNorm(), {1, 6, 6}, 3, dev, 98);
    restoreParams(Checkpoint::read(path("bn.ckpt")), warm.params(), warm.paramCount(), warm.state());
    EXPECT_EQ(evalLogits(warm), evalLogits(saved)) << "a warm start takes the running statistics along";
}

TEST_F(ModelStateCheckpoint, MissingRunningStatisticsAreNamedAndNothingIsOverwritten) {
    CpuDevice dev(1);
    Model m(withBatchNorm(), {1, 6, 6}, 3, dev, 1);
    auto opt = Optimizer::create(adam(), m.paramCount());
    CheckpointWriter w;  // as a build without model state wrote it
    saveTraining(w, m.params(), m.paramCount(), *opt);
    w.commit(path("old.ckpt"));
    Model target(withBatchNorm(), {1, 6, 6}, 3, dev, 2);
    const Values before(target.params(), target.params() + target.paramCount());
    const std::string want = path("old.ckpt") + ": the checkpoint has no shard 'model.state' with this model's " +
                             std::to_string(m.state().size()) +
                             " values of batch norm running statistics (it was saved from a model without batch "
                             "norm, or by a build that did not save them)";
    EXPECT_EQ(errorOf([&] {
                  restoreTraining(Checkpoint::read(path("old.ckpt")), target.params(), target.paramCount(), *opt,
                                  target.state());
              }),
              want);
    EXPECT_EQ(errorOf([&] {
                  restoreParams(Checkpoint::read(path("old.ckpt")), target.params(), target.paramCount(), target.state());
              }),
              want);
    EXPECT_EQ(Values(target.params(), target.params() + target.paramCount()), before);

    // The wrong size is named too.
    Values state(m.state().begin(), m.state().end());
    state.pop_back();
    CheckpointWriter w2;
    saveTraining(w2, m.params(), m.paramCount(), *opt, state);
    w2.commit(path("short.ckpt"));
    EXPECT_NE(errorOf([&] {
                  restoreParams(Checkpoint::read(path("short.ckpt")), target.params(), target.paramCount(), target.state());
              }).find("shard 'model.state' holds " + std::to_string(state.size()) + " float32 values"),
              std::string::npos);
}

TEST_F(ModelStateCheckpoint, ModelsWithoutBatchNormWriteWhatTheyAlwaysWrote) {
    CpuDevice dev(1);
    Model m(withoutBatchNorm(), {1, 4, 4}, 3, dev, 1);
    EXPECT_TRUE(m.state().empty());
    auto opt = Optimizer::create(adam(), m.paramCount());
    CheckpointWriter withState, without;
    saveTraining(withState, m.params(), m.paramCount(), *opt, m.state());
    saveTraining(without, m.params(), m.paramCount(), *opt);
    withState.commit(path("a.ckpt"));
    without.commit(path("b.ckpt"));
    EXPECT_EQ(test::readText(path("a.ckpt")), test::readText(path("b.ckpt")));
    EXPECT_FALSE(Checkpoint::read(path("a.ckpt")).has(kModelStateShard));
    restoreTraining(Checkpoint::read(path("b.ckpt")), m.params(), m.paramCount(), *opt, m.state());

    // A checkpoint with running statistics belongs to another model.
    Model bnModel(withBatchNorm(), {1, 6, 6}, 3, dev, 1);
    CheckpointWriter w;
    saveTraining(w, m.params(), m.paramCount(), *opt, bnModel.state());
    w.commit(path("c.ckpt"));
    EXPECT_NE(errorOf([&] {
                  restoreTraining(Checkpoint::read(path("c.ckpt")), m.params(), m.paramCount(), *opt, m.state());
              }).find("holds model state"),
              std::string::npos);
}

}  // namespace
}  // namespace trainbench::engine
