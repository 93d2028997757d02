#include "engine/train/trainer.h"

#include <algorithm>
#include <chrono>

#include "engine/layers/softmaxcrossentropy.h"
#include "engine/util/vectorkernels.h"

namespace trainbench::engine {

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
constexpr int64_t kEvalBatch = 1000;
}  // namespace

Trainer::Trainer(Model& model, Optimizer& optimizer, const ImageDataset& train, const ImageDataset& test,
                 const TrainConfig& config, const DataConfig& data)
    : model_(model), optimizer_(optimizer), train_(train), test_(test), config_(config),
      batcher_(train, config.batch_size, data.shuffle, data.drop_remainder, config.seed),
      x_(static_cast<size_t>(config.batch_size * batcher_.exampleSize())),
      y_(static_cast<size_t>(config.batch_size)) {}

TrainPlan Trainer::plan() const {
    TrainPlan p;
    p.steps_per_epoch = batcher_.batchesPerEpoch();
    p.total_steps = config_.epochs > 0 ? config_.epochs * p.steps_per_epoch : config_.max_steps;
    if (config_.max_steps > 0) p.total_steps = std::min(p.total_steps, config_.max_steps);
    p.train_examples = train_.count;
    p.test_examples = test_.count;
    p.param_count = model_.paramCount();
    return p;
}

EvalRecord Trainer::evaluate(int64_t step, int64_t epoch) {
    const auto start = Clock::now();
    const int64_t exampleSize = batcher_.exampleSize();
    const int64_t batch = std::min<int64_t>(kEvalBatch, std::max<int64_t>(test_.count, 1));
    if (evalX_.size() < static_cast<size_t>(batch * exampleSize))
        evalX_ = AlignedBuffer(static_cast<size_t>(batch * exampleSize));
    double lossSum = 0.0;
    int64_t correct = 0;
    for (int64_t first = 0; first < test_.count; first += batch) {
        const int64_t n = std::min(batch, test_.count - first);
        const uint8_t* px = test_.pixels.data() + first * exampleSize;
        float* x = evalX_.data();
        kernels::scaleBytes(px, x, static_cast<size_t>(n * exampleSize), 1.0f / 255.0f);
        Tensor& logits = model_.forward(x, n, /*training=*/false);
        model_.device().stream().wait();
        LossResult r = SoftmaxCrossEntropy::compute(logits, test_.labels.data() + first, nullptr);
        lossSum += r.loss * static_cast<double>(n);
        correct += r.correct;
    }
    EvalRecord e;
    e.step = step;
    e.epoch = epoch;
    e.split = "test";
    e.samples = test_.count;
    e.loss = test_.count ? lossSum / static_cast<double>(test_.count) : 0.0;
    e.accuracy = test_.count ? static_cast<double>(correct) / static_cast<double>(test_.count) : 0.0;
    e.eval_seconds = secondsSince(start);
    return e;
}

RunSummary Trainer::run(TrainObserver& observer) {
    model_.device().bindThreads();
    const TrainPlan p = plan();
    observer.onStart(p);
    RunSummary s;
    double steadySeconds = 0.0;
    int64_t steadySamples = 0, allSamples = 0;
    int64_t step = 0, lastEvalStep = -1, currentEpoch = 0;
    bool stop = false;
    const int64_t classes = model_.numClasses();

    auto evalNow = [&](int64_t epoch) {
        EvalRecord e = evaluate(step, epoch);
        e.wall_seconds = s.train_seconds;
        s.eval_seconds += e.eval_seconds;
        s.final_accuracy = e.accuracy;
        s.best_accuracy = std::max(s.best_accuracy, e.accuracy);
        lastEvalStep = step;
        observer.onEval(e);
        if (config_.target_accuracy > 0.0 && !s.time_to_target && e.accuracy >= config_.target_accuracy) {
            s.time_to_target = s.train_seconds;
            s.step_at_target = step;
            if (config_.stop_at_target) {
                s.stop_reason = "target_accuracy";
                stop = true;
            }
        }
    };

    for (int64_t epoch = 0; !stop && (config_.epochs == 0 || epoch < config_.epochs); ++epoch) {
        currentEpoch = epoch;
        batcher_.startEpoch(epoch);
        while (!stop) {
            if (config_.max_steps > 0 && step >= config_.max_steps) {
                s.stop_reason = "max_steps";
                stop = true;
                break;
            }
            const auto t0 = Clock::now();
            const int64_t n = batcher_.next(x_.data(), y_.data());
            if (n == 0) break;
            const double inputSeconds = secondsSince(t0);
            ++step;
            Tensor& logits = model_.forward(x_.data(), n, /*training=*/true, deriveSeed(config_.seed, kSeedDropout, step));
            batcher_.prefetchNext();
            if (gradLogits_.empty() || gradLogits_.dims()[0] != n)
                gradLogits_ = Tensor(Tensor::plainDesc({n, classes}), model_.device().engine());
            model_.device().stream().wait();
            LossResult r = SoftmaxCrossEntropy::compute(logits, y_.data(), &gradLogits_);
            // Each layer is updated as soon as its gradients are final, while they are still in cache.
            model_.backward(gradLogits_, [&](int64_t offset, int64_t count) {
                optimizer_.update(model_.params(), model_.grads(), offset, offset + count, step);
            });

            StepRecord rec;
            rec.step = step;
            rec.epoch = epoch;
            rec.loss = r.loss;
            rec.step_seconds = secondsSince(t0);
            rec.input_seconds = inputSeconds;
            rec.samples = n;
            rec.samples_per_second = static_cast<double>(n) / rec.step_seconds;
            rec.learning_rate = optimizer_.learningRate(step);
            s.train_seconds += rec.step_seconds;
            rec.wall_seconds = s.train_seconds;
            allSamples += n;
            if (step > kWarmupSteps) {
                steadySeconds += rec.step_seconds;
                steadySamples += n;
            }
            s.final_loss = r.loss;
            s.steps = step;
            observer.onStep(rec);

            if (config_.eval_every_steps > 0 && step % config_.eval_every_steps == 0) evalNow(epoch);
            if (!stop && observer.stopRequested()) {
                s.stop_reason = "stopped";
                stop = true;
            }
        }
        if (stop) break;
        s.epochs_completed = epoch + 1;
        if (config_.eval_at_epoch_end && lastEvalStep != step) evalNow(epoch);
    }
    if (s.stop_reason.empty()) s.stop_reason = "epochs";
    // A run that stopped between evaluations still reports where it ended, if it evaluates at all.
    const bool evaluates = config_.eval_every_steps > 0 || config_.eval_at_epoch_end;
    if (evaluates && step > 0 && lastEvalStep != step && s.stop_reason != "target_accuracy")
        evalNow(currentEpoch);
    s.throughput = steadySamples > 0 ? static_cast<double>(steadySamples) / steadySeconds
                   : s.train_seconds > 0 ? static_cast<double>(allSamples) / s.train_seconds : 0.0;
    return s;
}

}  // namespace trainbench::engine
