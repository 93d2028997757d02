// The trainer with an asynchronous strategy: steps finish out of order and later than they are
// handed over, yet the observer sees every step once and in order, evaluations and checkpoints see
// every dispatched step applied, and the clock adds up.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <functional>
#include <numeric>

#include "engine/data/pipeline/datasource.h"
#include "engine/train/trainer.h"

namespace trainbench::engine {
namespace {

bool haveFashionMnist() {
    return std::filesystem::exists(std::filesystem::path(DataConfig().path) / "train-images-idx3-ubyte.gz");
}

// Runs each step on one device, but only when the trainer asks what finished: up to `depth` steps are
// in flight, and they finish newest first (the reverse of the order they were handed over).
class ScramblingStrategy final : public Strategy {
public:
    ScramblingStrategy(Model& model, Optimizer& optimizer, size_t depth) : single_(model, optimizer), depth_(depth) {}
    std::string name() const override { return "scrambling"; }
    int replicas() const override { return 1; }
    std::string devices() const override { return "cpu:1"; }
    Model& model() override { return single_.model(); }
    Optimizer& optimizer() override { return single_.optimizer(); }
    void bindThreads() override { single_.bindThreads(); }
    StrategyStep step(const BatchView&, int64_t, uint64_t, const std::function<void()>&) override {
        ADD_FAILURE() << "an asynchronous strategy's step() must not be called";
        return {};
    }
    bool asynchronous() const override { return true; }
    void dispatch(const BatchView& b, int64_t step, uint64_t seed) override {
        const Dims& shape = single_.model().sampleShape();
        const int64_t size = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
        Task t{step, seed, std::vector<float>(b.x, b.x + b.count * size), std::vector<int32_t>(b.y, b.y + b.count)};
        flight_.push_back(std::move(t));
        ++dispatched;
        // Copies only: the trainer may reuse the batch's memory at once.
        std::fill(b.x, b.x + b.count * size, -1.0f);
    }
    std::vector<StrategyStep> completed(bool all) override {
        std::vector<StrategyStep> out;
        while (flight_.size() > (all ? 0 : depth_)) {
            // Newest first among what is due: the oldest `due` steps finish in reverse order.
            const size_t due = flight_.size() - (all ? 0 : depth_);
            for (size_t i = due; i-- > 0;) out.push_back(run(flight_[i]));
            flight_.erase(flight_.begin(), flight_.begin() + static_cast<std::ptrdiff_t>(due));
        }
        // A duplicate result (a rescheduled step both workers finished) is ignored by the trainer.
        if (!out.empty()) out.push_back(out.front());
        return out;
    }
    void fetchState(bool optimizerToo) override {
        EXPECT_TRUE(flight_.empty()) << "evaluations and checkpoints come after every dispatched step finished";
        (optimizerToo ? checkpointFetches : evalFetches)++;
    }

    int64_t dispatched = 0, evalFetches = 0, checkpointFetches = 0;

private:
    struct Task {
        int64_t step;
        uint64_t seed;
        std::vector<float> x;
        std::vector<int32_t> y;
    };
    StrategyStep run(Task& t) {
        StrategyStep r = single_.step(BatchView{t.x.data(), t.y.data(), static_cast<int64_t>(t.y.size())}, t.step,
                                      t.seed, {});
        r.step = t.step;
        r.comm_seconds = 0.001;
        r.updates.push_back({0, 0, 0, static_cast<int64_t>(depth_)});
        return r;
    }
    SingleStrategy single_;
    size_t depth_;
    std::deque<Task> flight_;
};

class Log : public TrainObserver {
public:
    void onStep(const StepRecord& s) override { steps.push_back(s); }
    void onEval(const EvalRecord& e) override { evals.push_back(e); }
    std::vector<StepRecord> steps;
    std::vector<EvalRecord> evals;
};

TEST(AsyncTrainer, RecordsEveryStepOnceInOrderAndSyncsBeforeEvaluations) {
    if (!haveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    DataConfig data;
    data.train_limit = 64 * 30;
    data.test_limit = 200;
    TrainConfig train;
    train.batch_size = 64;
    train.epochs = 2;  // 30 steps per epoch
    train.eval_every_steps = 25;
    train.eval_at_epoch_end = true;
    train.checkpoint_every_steps = 20;
    train.seed = 3;
    ModelSpec spec;
    spec.preset = "mlp";
    spec.layers = presetLayers("mlp");
    OptimizerConfig oc;

    // The same run on one device, synchronously: the reference losses.
    std::vector<StepRecord> reference;
    {
        TrainingData d = openTrainingData(data, train.batch_size, train.seed);
        CpuDevice dev(1);
        Model model(spec, {d.channels, d.height, d.width}, d.num_classes, dev, train.seed);
        auto opt = Optimizer::create(oc, model.paramCount());
        Trainer t(model, *opt, *d.train, d.test, train);
        Log log;
        t.run(log);
        reference = log.steps;
    }
    ASSERT_EQ(reference.size(), 60u);

    TrainingData d = openTrainingData(data, train.batch_size, train.seed);
    CpuDevice dev(1);
    Model model(spec, {d.channels, d.height, d.width}, d.num_classes, dev, train.seed);
    auto opt = Optimizer::create(oc, model.paramCount());
    ScramblingStrategy strategy(model, *opt, 3);
    Trainer t(strategy, *d.train, d.test, train);
    Log log;
    std::vector<TrainProgress> checkpoints;
    const RunSummary s = t.run(log, nullptr, [&](const TrainProgress& p) { checkpoints.push_back(p); });

    ASSERT_EQ(log.steps.size(), 60u);
    double stepSeconds = 0;
    for (size_t i = 0; i < log.steps.size(); ++i) {
        const StepRecord& r = log.steps[i];
        EXPECT_EQ(r.step, static_cast<int64_t>(i + 1));
        EXPECT_EQ(r.epoch, static_cast<int64_t>(i / 30));
        EXPECT_EQ(r.samples, 64);
        ASSERT_EQ(r.updates.size(), 1u);
        EXPECT_EQ(r.updates[0].staleness, 3);
        EXPECT_DOUBLE_EQ(r.comm_seconds, 0.001);
        if (i > 0) {
            EXPECT_GE(r.wall_seconds, log.steps[i - 1].wall_seconds);
        }
        stepSeconds += r.step_seconds;
    }
    // Between drains one step finishes per step handed over, oldest first: one device's run. The
    // checkpoint at step 20 drains steps 18..20 newest first, so step 20 ran on other parameters
    // than one device's step 20 (and it is still recorded as step 20, with its own loss).
    for (size_t i = 0; i < 17; ++i) EXPECT_EQ(log.steps[i].loss, reference[i].loss) << "step " << i + 1;
    EXPECT_NE(log.steps[19].loss, reference[19].loss);
    EXPECT_NEAR(stepSeconds, s.train_seconds, 1e-9) << "the steps' times add up to the training time";
    EXPECT_DOUBLE_EQ(log.steps.back().wall_seconds, s.train_seconds);
    EXPECT_EQ(s.steps, 60);
    EXPECT_DOUBLE_EQ(s.final_loss, log.steps.back().loss);
    EXPECT_NEAR(s.comm_seconds, 0.06, 1e-9);

    // Evaluations at steps 25, 30 (epoch end), 50 and 60, each after every dispatched step finished.
    ASSERT_EQ(log.evals.size(), 4u);
    EXPECT_EQ(log.evals[0].step, 25);
    EXPECT_EQ(log.evals[1].step, 30);
    EXPECT_EQ(log.evals[2].step, 50);
    EXPECT_EQ(log.evals[3].step, 60);
    EXPECT_EQ(strategy.evalFetches, 4);
    // Checkpoints at 20, 40, 60 with every step up to them recorded.
    ASSERT_EQ(checkpoints.size(), 3u);
    EXPECT_EQ(strategy.checkpointFetches, 3);
    for (size_t i = 0; i < checkpoints.size(); ++i) {
        EXPECT_EQ(checkpoints[i].step, static_cast<int64_t>(20 * (i + 1)));
        EXPECT_EQ(checkpoints[i].summary.steps, checkpoints[i].step);
    }
    EXPECT_EQ(checkpoints[1].epoch, 1);
    EXPECT_EQ(checkpoints[1].batch_in_epoch, 10);
    EXPECT_EQ(strategy.dispatched, 60);
}

}  // namespace
}  // namespace trainbench::engine
