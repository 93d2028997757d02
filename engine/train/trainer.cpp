#include "engine/train/trainer.h"

#include <algorithm>

#include "engine/instrument/instrument.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/train/asynchronousloop.h"
#include "engine/train/runbookkeeping.h"
#include "engine/train/synchronousloop.h"
#include "engine/train/traininput.h"

namespace trainbench::engine {

namespace {
constexpr int64_t kEvalBatch = 1000;
}  // namespace

Trainer::Trainer(Strategy& strategy, InputPipeline& train, const EvalSet& test, const TrainConfig& config)
    : strategy_(strategy), train_(train), test_(test), config_(config) {}

Trainer::Trainer(Model& model, Optimizer& optimizer, InputPipeline& train, const EvalSet& test,
                 const TrainConfig& config)
    : ownStrategy_(std::make_unique<SingleStrategy>(model, optimizer)),
      strategy_(*ownStrategy_),
      train_(train),
      test_(test),
      config_(config) {}

TrainPlan Trainer::plan() const {
    TrainPlan p;
    p.steps_per_epoch = train_.batchesPerEpoch();  // 0 when a streaming source has not been counted
    p.total_steps = config_.epochs > 0 ? config_.epochs * p.steps_per_epoch : config_.max_steps;
    if (config_.max_steps > 0) p.total_steps = p.total_steps > 0 ? std::min(p.total_steps, config_.max_steps) : config_.max_steps;
    if (config_.epochs > 0 && p.steps_per_epoch == 0) p.total_steps = 0;  // unknown
    p.train_examples = train_.sourceExamples();  // the data trained on, not what drop_remainder leaves of it
    p.test_examples = test_.count;
    p.param_count = strategy_.model().paramCount();
    return p;
}

EvalRecord Trainer::evaluate(int64_t step, int64_t epoch) {
    TB_PHASE(Evaluation);
    const auto start = RunBookkeeping::Clock::now();
    const int64_t exampleSize = test_.exampleSize();
    const int64_t batch = std::min<int64_t>(kEvalBatch, std::max<int64_t>(test_.count, 1));
    if (evalX_.size() < static_cast<size_t>(batch * exampleSize))
        evalX_ = AlignedBuffer(static_cast<size_t>(batch * exampleSize));
    double lossSum = 0.0;
    int64_t correct = 0;
    for (int64_t first = 0; first < test_.count; first += batch) {
        const int64_t n = std::min(batch, test_.count - first);
        float* x = evalX_.data();
        std::copy_n(test_.x.data() + first * exampleSize, n * exampleSize, x);
        Model& model = strategy_.model();
        Tensor& logits = model.forward(x, n, /*training=*/false);
        model.device().stream().wait();
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
    e.eval_seconds = RunBookkeeping::secondsSince(start);
    return e;
}

void Trainer::setClock(StepClock* clock) { clock_ = clock; }

RunSummary Trainer::run(TrainObserver& observer, const TrainProgress* resume, const CheckpointHook& checkpoint) {
    strategy_.bindThreads();
    prof::setThreadName("trainer");
    prof::resetPhases();
    TrainInput input(train_, resume ? resume->batch_in_epoch : 0);
    observer.onStart(plan());
    RunBookkeeping book(config_, observer, clock_, resume, checkpoint);
    // An asynchronous strategy's steps finish after the loop has moved on: a loop of its own.
    if (strategy_.asynchronous()) return AsynchronousLoop(*this, strategy_, input, book).run();
    return SynchronousLoop(*this, strategy_, input, book).run();
}

}  // namespace trainbench::engine
