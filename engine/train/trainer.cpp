#include "engine/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "engine/layers/softmaxcrossentropy.h"
#include "engine/instrument/instrument.h"
#include "engine/telemetry/stepphases.h"
#include "engine/util/vectorkernels.h"

namespace trainbench::engine {

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
constexpr int64_t kEvalBatch = 1000;

// The step's breakdown from the training thread's phases; the parts add up to step_seconds (what no
// phase claimed is "other"). Built without profiling, only the measured input wait is known.
void recordPhases(StepRecord& rec, const prof::PhaseTimes& p, double measuredInput) {
    using prof::Phase;
    if constexpr (!prof::kEnabled) {
        rec.input_seconds = measuredInput;
        rec.other_seconds = std::max(0.0, rec.step_seconds - measuredInput);
        return;
    }
    double known = 0.0;
    for (const StepPhase& phase : kInStepPhases) {
        if (phase.phase == Phase::Other) continue;
        rec.*phase.seconds = p[phase.phase];
        known += rec.*phase.seconds;
    }
    rec.other_seconds = std::max(0.0, rec.step_seconds - known);
}
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
    const auto start = Clock::now();
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
    e.eval_seconds = secondsSince(start);
    return e;
}

void Trainer::setClock(StepClock* clock) { clock_ = clock; }

RunSummary Trainer::run(TrainObserver& observer, const TrainProgress* resume, const CheckpointHook& checkpoint) {
    strategy_.bindThreads();
    prof::setThreadName("trainer");
    prof::resetPhases();
    PipelineStats before = train_.stats();
    // What each pipeline stage did during the step just taken.
    auto stageDeltas = [&](StepRecord& rec) {
        PipelineStats now = train_.stats();
        rec.input_stages.reserve(now.stages.size());
        for (size_t i = 0; i < now.stages.size() && i < before.stages.size(); ++i) {
            const StageStats &a = before.stages[i], &b = now.stages[i];
            InputStageStep d;
            d.stage = b.name;
            d.seconds = b.seconds - a.seconds;
            d.items = b.items - a.items;
            d.bytes = b.bytes - a.bytes;
            const int64_t samples = b.fill_samples - a.fill_samples;
            if (samples > 0) d.fill = (b.fill_sum - a.fill_sum) / static_cast<double>(samples);
            rec.input_stages.push_back(std::move(d));
        }
        before = std::move(now);
    };
    const TrainPlan p = plan();
    observer.onStart(p);
    RunSummary s;
    double steadySeconds = 0.0;
    int64_t steadySamples = 0, allSamples = 0;
    int64_t step = 0, lastEvalStep = -1, currentEpoch = 0, batchInEpoch = 0, lastCheckpointStep = -1;
    int64_t firstEpoch = 0, skipBatches = 0;
    if (resume) {
        s = resume->summary;
        s.stop_reason.clear();
        step = resume->step;
        lastCheckpointStep = step;
        if (resume->evaluated_at_step) lastEvalStep = step;
        firstEpoch = resume->epoch;
        skipBatches = resume->batch_in_epoch;
    }
    bool stop = false;
    // Evaluation and checkpoint time since the last step, recorded with the next step.
    double evalSecondsSinceStep = 0.0, checkpointSecondsSinceStep = 0.0;

    // Records go to the observer in step order. A synchronous step is recorded as soon as it is
    // done; an asynchronous one (dispatched to a worker) waits in `pending` until it and every
    // earlier step have finished.
    const bool async = strategy_.asynchronous();
    std::map<int64_t, StepRecord> pending;
    std::set<int64_t> finished;
    auto emit = [&](StepRecord& rec) {
        rec.samples_per_second = rec.step_seconds > 0 ? static_cast<double>(rec.samples) / rec.step_seconds : 0.0;
        s.comm_seconds += rec.comm_seconds;
        s.wait_seconds += rec.wait_seconds;
        // (An asynchronous step on a clock has its time from dispatch: see below.)
        if (!(async && clock_)) rec.wall_seconds = s.train_seconds;
        allSamples += rec.samples;
        if (rec.step > kWarmupSteps) {
            steadySeconds += rec.step_seconds;
            steadySamples += rec.samples;
        }
        s.final_loss = rec.loss;
        s.steps = rec.step;
        observer.onStep(rec);
    };
    auto absorb = [&](std::vector<StrategyStep> done) {
        for (StrategyStep& r : done) {
            auto it = pending.find(r.step);
            if (it == pending.end()) continue;  // a duplicate (a rescheduled step that both workers finished)
            StepRecord& rec = it->second;
            rec.loss = r.loss;
            rec.comm_seconds = r.comm_seconds;
            rec.wait_seconds = r.wait_seconds;
            rec.replicas = std::move(r.replicas);
            rec.updates = std::move(r.updates);
            // The worker's measured figures arrive now: the clock charges them too (the step's own
            // seconds are the ones it charged at dispatch).
            if (clock_) clock_->step(rec);
            finished.insert(r.step);
        }
        while (!pending.empty() && finished.count(pending.begin()->first)) {
            emit(pending.begin()->second);
            finished.erase(pending.begin()->first);
            pending.erase(pending.begin());
        }
    };
    // Async: waits for every dispatched step, so that evaluations and checkpoints see all of them
    // applied. The wait is training time, charged to the last step dispatched.
    auto drain = [&] {
        if (!async) return;
        const auto t = Clock::now();
        std::vector<StrategyStep> done = strategy_.completed(/*all=*/true);
        if (!pending.empty()) {  // (with nothing pending there was nothing to wait for)
            const double waited = secondsSince(t);
            if (clock_) {
                s.host_seconds += waited;  // the clock's steps already hold the workers' time
            } else {
                s.train_seconds += waited;
                pending.rbegin()->second.step_seconds += waited;
            }
        }
        absorb(std::move(done));
    };

    auto evalNow = [&](int64_t epoch) {
        TB_PHASE(Evaluation);
        const auto evalStart = Clock::now();
        drain();
        strategy_.fetchState(/*optimizerToo=*/false);
        EvalRecord e = evaluate(step, epoch);
        if (clock_) clock_->eval(e);
        e.wall_seconds = s.train_seconds;
        s.eval_seconds += e.eval_seconds;
        ++s.evaluations;
        s.final_accuracy = e.accuracy;
        s.best_accuracy = std::max(s.best_accuracy, e.accuracy);
        lastEvalStep = step;
        observer.onEval(e);
        evalSecondsSinceStep += clock_ ? e.eval_seconds : secondsSince(evalStart);
        if (config_.target_accuracy > 0.0 && !s.time_to_target && e.accuracy >= config_.target_accuracy) {
            s.time_to_target = s.train_seconds;
            s.step_at_target = step;
            if (config_.stop_at_target) {
                s.stop_reason = "target_accuracy";
                stop = true;
            }
        }
    };

    auto checkpointNow = [&](int64_t epoch) {
        TB_PHASE(Checkpoint);
        const auto checkpointStart = Clock::now();
        drain();
        strategy_.fetchState(/*optimizerToo=*/true);
        TrainProgress at;
        at.step = step;
        at.epoch = epoch;
        at.batch_in_epoch = batchInEpoch;
        at.evaluated_at_step = lastEvalStep == step;
        at.summary = s;
        checkpoint(at);
        lastCheckpointStep = step;
        checkpointSecondsSinceStep += secondsSince(checkpointStart);
    };

    for (int64_t epoch = firstEpoch; !stop && (config_.epochs == 0 || epoch < config_.epochs); ++epoch) {
        currentEpoch = epoch;
        train_.startEpoch(epoch);
        batchInEpoch = 0;
        // Resuming: the batches of this epoch trained before the checkpoint come again in the same
        // order (same seed); skip them.
        for (; skipBatches > 0; --skipBatches, ++batchInEpoch)
            if (train_.next().count == 0) break;
        skipBatches = 0;
        while (!stop) {
            if (config_.max_steps > 0 && step >= config_.max_steps) {
                s.stop_reason = "max_steps";
                stop = true;
                break;
            }
            observer.onStepBegin(step + 1);
            prof::takePhases();  // what ran since the last step is recorded on its own (evaluation, checkpoint)
            // A trace shows each step as one zone, from its batch to its update.
            static constexpr prof::ZoneSite kStepZone{"step", "step"};
            prof::ZoneScope stepZone(&kStepZone, static_cast<double>(step + 1));
            const auto t0 = Clock::now();
            BatchView batch;
            {
                TB_PHASE(Input);
                batch = train_.next();
            }
            const int64_t n = batch.count;
            if (n == 0) {
                stepZone.end();
                observer.onStepEnd(step + 1);  // the epoch ended instead: no such step
                break;
            }
            ++batchInEpoch;
            const double inputSeconds = secondsSince(t0);
            ++step;
            const uint64_t stepSeed = deriveSeed(config_.seed, kSeedDropout, step);
            StepRecord rec;
            rec.step = step;
            rec.epoch = epoch;
            rec.samples = n;
            rec.input_seconds = inputSeconds;
            rec.learning_rate = strategy_.optimizer().learningRate(step);
            bool stopAgreed = false;
            if (async) {
                strategy_.dispatch(batch, step, stepSeed);
                train_.stepMidpoint();
            } else {
                StrategyStep r = strategy_.step(batch, step, stepSeed, [&] { train_.stepMidpoint(); });
                rec.loss = r.loss;
                rec.comm_seconds = r.comm_seconds;
                rec.wait_seconds = r.wait_seconds;
                rec.replicas = std::move(r.replicas);
                stopAgreed = r.stop_requested;
            }
            // For an asynchronous step this is the time to hand it over (input, waiting for a free
            // worker): the job's time per step, as the loop of a synchronous one is.
            rec.step_seconds = secondsSince(t0);
            stepZone.end();
            recordPhases(rec, prof::takePhases(), inputSeconds);
            if (clock_) {
                s.host_seconds += rec.step_seconds;
                clock_->step(rec);
            }
            rec.eval_seconds = std::exchange(evalSecondsSinceStep, 0.0);
            rec.checkpoint_seconds = std::exchange(checkpointSecondsSinceStep, 0.0);
            observer.onStepEnd(step);
            s.input_seconds += rec.input_seconds;
            s.train_seconds += rec.step_seconds;
            stageDeltas(rec);
            // On a clock an asynchronous step's time is charged at dispatch, in step order; its record
            // comes back whenever its worker finishes, so it keeps the time it was charged at.
            if (async && clock_) rec.wall_seconds = s.train_seconds;
            pending.emplace(step, std::move(rec));
            if (!async) finished.insert(step);
            absorb(async ? strategy_.completed(/*all=*/false) : std::vector<StrategyStep>{});

            if (config_.eval_every_steps > 0 && step % config_.eval_every_steps == 0) evalNow(epoch);
            if (checkpoint && config_.checkpoint_every_steps > 0 && step % config_.checkpoint_every_steps == 0)
                checkpointNow(epoch);
            if (!stop && (stopAgreed || observer.stopRequested())) {
                s.stop_reason = "stopped";
                stop = true;
            }
        }
        if (stop) break;
        s.epochs_completed = epoch + 1;
        if (config_.eval_at_epoch_end && lastEvalStep != step) evalNow(epoch);
    }
    drain();
    if (s.stop_reason.empty()) s.stop_reason = "epochs";
    s.skipped_records = train_.stats().skipped_records;
    // A run that stopped between evaluations still reports where it ended, if it evaluates at all.
    const bool evaluates = config_.eval_every_steps > 0 || config_.eval_at_epoch_end;
    if (evaluates && step > 0 && lastEvalStep != step && s.stop_reason != "target_accuracy")
        evalNow(currentEpoch);
    // The parameters the run ended with, for other runs to start from (a warm start), unless the last
    // step was checkpointed already. Its time is in no step: there is no next step to charge it to.
    if (checkpoint && config_.checkpoint_at_end && step > 0 && lastCheckpointStep != step) checkpointNow(currentEpoch);
    s.throughput = steadySamples > 0 ? static_cast<double>(steadySamples) / steadySeconds
                   : s.train_seconds > 0 ? static_cast<double>(allSamples) / s.train_seconds : 0.0;
    return s;
}

}  // namespace trainbench::engine
