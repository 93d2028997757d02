// Training checkpoints: training that stops, saves, restores into fresh buffers and a fresh optimizer
// and goes on must end with exactly the parameters of training that never stopped, for every
// optimizer; and a checkpoint that does not fit the model or optimizer is refused before anything
// is overwritten.
#include "engine/checkpoint/trainingcheckpoint.h"

#include <cstring>
#include <vector>

#include "engine/optim/optimizer.h"
#include "engine/util/rng.h"
#include "tempdirtest.h"
#include "tests/engine/optimizerconfigs.h"

namespace trainbench::engine {
namespace {

using test::errorOf;
using test::TempDirTest;

// More than two optimizer grains, so updates run split over threads as in training.
constexpr int64_t kParams = 70001;

std::vector<float> initialParams() {
    Rng rng(1);
    std::vector<float> p(kParams);
    for (float& x : p) x = rng.uniform(-1.0f, 1.0f);
    return p;
}

// The gradient of a step: the same whoever asks, so two runs see the same ones.
std::vector<float> gradient(int64_t step) {
    Rng rng(deriveSeed(7, 99, static_cast<uint64_t>(step)));
    std::vector<float> g(kParams);
    for (float& x : g) x = rng.uniform(-0.5f, 0.5f);
    return g;
}

void train(Optimizer& opt, std::vector<float>& params, int64_t first, int64_t last) {
    for (int64_t s = first; s <= last; ++s) opt.step(params.data(), gradient(s).data(), kParams, s);
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

OptimizerConfig sgd(float momentum, bool nesterov) {
    OptimizerConfig c;
    c.kind = OptimizerKind::SGD;
    c.learning_rate = 0.05f;
    c.momentum = momentum;
    c.nesterov = nesterov;
    c.weight_decay = 1e-3f;
    c.warmup_steps = 2;
    return c;
}

class CheckpointTraining : public TempDirTest {
protected:
    // Trains steps 1..total without a break, and again with a checkpoint after `stopAfter` steps
    // restored into new buffers and a new optimizer; the two must agree bit for bit.
    void expectResumesExactly(const OptimizerConfig& config, int64_t stopAfter, int64_t total) {
        std::vector<float> straight = initialParams();
        train(*Optimizer::create(config, kParams), straight, 1, total);

        std::vector<float> first = initialParams();
        auto before = Optimizer::create(config, kParams);
        train(*before, first, 1, stopAfter);
        CheckpointWriter w;
        saveTraining(w, first.data(), kParams, *before);
        w.setMetadata("{\"step\": " + std::to_string(stopAfter) + "}");
        w.commit(path("train.ckpt"));

        const Checkpoint ck = Checkpoint::read(path("train.ckpt"));
        std::vector<float> resumed(kParams, 123.0f);
        auto after = Optimizer::create(config, kParams);
        restoreTraining(ck, resumed.data(), kParams, *after);
        EXPECT_TRUE(sameBits(resumed, first));
        train(*after, resumed, stopAfter + 1, total);
        EXPECT_TRUE(sameBits(resumed, straight)) << "resumed after step " << stopAfter;

        // Parameters alone (a warm start) are not enough once the optimizer has state; without this
        // check the test would not notice a restore that dropped it.
        if (before->state().empty() || stopAfter == 0) return;
        std::vector<float> warm(kParams);
        auto fresh = Optimizer::create(config, kParams);
        restoreParams(ck, warm.data(), kParams);
        train(*fresh, warm, stopAfter + 1, total);
        EXPECT_FALSE(sameBits(warm, straight));
    }
};

TEST_F(CheckpointTraining, AdamResumesBitIdentically) {
    auto opt = Optimizer::create(test::adam(3, 1e-3f), kParams);
    const auto state = opt->state();
    ASSERT_EQ(state.size(), 2u);
    EXPECT_EQ(state[0].name, "adam.m");
    EXPECT_EQ(state[1].name, "adam.v");
    EXPECT_EQ(state[0].values.size(), static_cast<size_t>(kParams));
    expectResumesExactly(test::adam(3, 1e-3f), 4, 9);
}

TEST_F(CheckpointTraining, SgdWithMomentumResumesBitIdentically) {
    auto opt = Optimizer::create(sgd(0.9f, false), kParams);
    const auto state = opt->state();
    ASSERT_EQ(state.size(), 1u);
    EXPECT_EQ(state[0].name, "sgd.momentum");
    for (bool nesterov : {false, true}) {
        SCOPED_TRACE(nesterov ? "nesterov" : "momentum");
        expectResumesExactly(sgd(0.9f, nesterov), 4, 9);
        expectResumesExactly(sgd(0.9f, nesterov), 0, 3);  // saved before the first step
    }
}

TEST_F(CheckpointTraining, PlainSgdHasNoStateAndResumes) {
    EXPECT_TRUE(Optimizer::create(sgd(0.0f, false), kParams)->state().empty());
    expectResumesExactly(sgd(0.0f, false), 3, 6);
    const Checkpoint ck = Checkpoint::read(path("train.ckpt"));
    ASSERT_EQ(ck.shards().size(), 2u);
    EXPECT_EQ(ck.shards()[0].name, "params");
    EXPECT_EQ(ck.shards()[1].name, "optimizer.state");
    EXPECT_TRUE(ck.bytes("optimizer.state").empty());
}

TEST_F(CheckpointTraining, MismatchesAreRefusedBeforeAnythingIsOverwritten) {
    const int64_t n = 100;
    std::vector<float> params(n, 0.5f);
    auto saved = Optimizer::create(test::adam(3, 1e-3f), n);
    saved->step(params.data(), std::vector<float>(n, 0.1f).data(), n, 1);
    CheckpointWriter w;
    saveTraining(w, params.data(), n, *saved);
    const std::string p = path("adam.ckpt");
    w.commit(p);
    const Checkpoint ck = Checkpoint::read(p);

    std::vector<float> target(n + 1, 7.0f);
    auto adam101 = Optimizer::create(test::adam(3, 1e-3f), n + 1);
    EXPECT_EQ(errorOf([&] { restoreTraining(ck, target.data(), n + 1, *adam101); }),
              p + ": shard 'params' holds 100 float32 values (400 bytes); expected 101 (the model's parameter count)");
    EXPECT_EQ(errorOf([&] { restoreParams(ck, target.data(), n + 1); }),
              p + ": shard 'params' holds 100 float32 values (400 bytes); expected 101 (the model's parameter count)");
    auto adam99 = Optimizer::create(test::adam(3, 1e-3f), n - 1);
    EXPECT_EQ(errorOf([&] { restoreTraining(ck, target.data(), n, *adam99); }),
              p + ": shard 'adam.m' holds 100 float32 values (400 bytes); expected 99 (the size of this optimizer's "
                  "'adam.m')");
    auto momentum = Optimizer::create(sgd(0.9f, false), n);
    EXPECT_EQ(errorOf([&] { restoreTraining(ck, target.data(), n, *momentum); }),
              p + ": the checkpoint holds optimizer state {adam.m, adam.v}, this optimizer keeps {sgd.momentum}");
    auto plain = Optimizer::create(sgd(0.0f, false), n);
    EXPECT_EQ(errorOf([&] { restoreTraining(ck, target.data(), n, *plain); }),
              p + ": the checkpoint holds optimizer state {adam.m, adam.v}, this optimizer keeps {}");
    for (float x : target) ASSERT_EQ(x, 7.0f);  // nothing copied by a refused restore
    const std::vector<OptimizerStateSpan> untouched = adam99->state();
    for (float x : untouched[0].values) ASSERT_EQ(x, 0.0f);

    CheckpointWriter bare;
    bare.addFloats("params", params);
    bare.commit(path("bare.ckpt"));
    EXPECT_EQ(errorOf([&] { restoreTraining(Checkpoint::read(path("bare.ckpt")), target.data(), n, *plain); }),
              path("bare.ckpt") + ": not a training checkpoint: it has no shard 'optimizer.state' naming the "
                                  "optimizer's state");
    restoreParams(Checkpoint::read(path("bare.ckpt")), target.data(), n);  // enough for a warm start
    EXPECT_TRUE(sameBits(std::vector<float>(target.begin(), target.begin() + n), params));
}

}  // namespace
}  // namespace trainbench::engine
