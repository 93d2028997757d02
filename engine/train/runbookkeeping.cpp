#include "engine/train/runbookkeeping.h"

#include <algorithm>
#include <utility>

#include "engine/telemetry/stepphases.h"
#include "engine/train/trainer.h"
#include "engine/util/rng.h"

namespace trainbench::engine {

namespace {
// A trace shows each step as one zone, from its batch to its update.
constexpr prof::ZoneSite kStepZone{"step", "step"};

// The step's breakdown from the training thread's phases; the parts add up to step_seconds (what no
// phase claimed is "other"). Built without profiling, only the measured input wait is known.
void recordPhases(StepRecord& rec, const prof::PhaseTimes& p, double measuredInput) {
    using prof::Phase;
    if constexpr (!prof::kEnabled) {
        rec.input_seconds = measuredInput;
        rec.other_seconds = std::max(0.0, rec.step_seconds - measuredInput);
        return;
    }
    double known = 0.0;  // summed in table order: input, forward, backward, optimizer, communication
    for (const StepPhase& phase : kInStepPhases) {
        if (phase.phase == Phase::Other) continue;
        rec.*phase.seconds = p[phase.phase];
        known += rec.*phase.seconds;
    }
    rec.other_seconds = std::max(0.0, rec.step_seconds - known);
}
}  // namespace

RunBookkeeping::RunBookkeeping(const TrainConfig& config, TrainObserver& observer, StepClock* clock,
                               const TrainProgress* resume, const CheckpointHook& checkpoint)
    : config_(config), observer_(observer), clock_(clock), checkpoint_(checkpoint) {
    if (!resume) return;
    s_ = resume->summary;
    s_.stop_reason.reset();
    step_ = resume->step;
    lastCheckpointStep_ = step_;
    if (resume->evaluated_at_step) lastEvalStep_ = step_;
    firstEpoch_ = resume->epoch;
}

void RunBookkeeping::startEpoch(int64_t epoch, int64_t skipped) {
    currentEpoch_ = epoch;
    batchInEpoch_ = skipped;
}

bool RunBookkeeping::epochCompleted(int64_t epoch) {
    s_.epochs_completed = epoch + 1;
    return config_.eval_at_epoch_end && lastEvalStep_ != step_;
}

bool RunBookkeeping::mayStep() {
    if (stop_) return false;
    if (config_.max_steps > 0 && step_ >= config_.max_steps) {
        s_.stop_reason = StopReason::MaxSteps;
        stop_ = true;
        return false;
    }
    return true;
}

BatchView RunBookkeeping::beginStep(TrainInput& input) {
    observer_.onStepBegin(step_ + 1);
    prof::takePhases();  // what ran since the last step is recorded on its own (evaluation, checkpoint)
    stepZone_.emplace(&kStepZone, static_cast<double>(step_ + 1));
    stepStart_ = Clock::now();
    const BatchView batch = input.next();
    if (batch.count == 0) {
        stepZone_.reset();
        observer_.onStepEnd(step_ + 1);  // the epoch ended instead: no such step
    }
    return batch;
}

StepRecord RunBookkeeping::startStep(int64_t samples) {
    ++batchInEpoch_;
    const double inputSeconds = secondsSince(stepStart_);
    ++step_;
    StepRecord rec;
    rec.step = step_;
    rec.epoch = currentEpoch_;
    rec.samples = samples;
    rec.input_seconds = inputSeconds;
    return rec;
}

uint64_t RunBookkeeping::stepSeed() const { return deriveSeed(config_.seed, kSeedDropout, static_cast<uint64_t>(step_)); }

void RunBookkeeping::endStep(StepRecord& rec) {
    rec.step_seconds = secondsSince(stepStart_);
    stepZone_.reset();
    recordPhases(rec, prof::takePhases(), rec.input_seconds);
    if (clock_) {
        s_.host_seconds += rec.step_seconds;
        clock_->step(rec);
    }
    rec.eval_seconds = std::exchange(evalSecondsSinceStep_, 0.0);
    rec.checkpoint_seconds = std::exchange(checkpointSecondsSinceStep_, 0.0);
    observer_.onStepEnd(step_);
    s_.input_seconds += rec.input_seconds;
    s_.train_seconds += rec.step_seconds;
    rec.wall_seconds = s_.train_seconds;
}

void RunBookkeeping::record(StepRecord& rec) {
    rec.samples_per_second = rec.step_seconds > 0 ? static_cast<double>(rec.samples) / rec.step_seconds : 0.0;
    s_.comm_seconds += rec.comm_seconds;
    s_.wait_seconds += rec.wait_seconds;
    allSamples_ += rec.samples;
    if (rec.step > Trainer::kWarmupSteps) {
        steadySeconds_ += rec.step_seconds;
        steadySamples_ += rec.samples;
    }
    s_.final_loss = rec.loss;
    s_.steps = rec.step;
    observer_.onStep(rec);
}

void RunBookkeeping::pollStop(bool agreed) {
    if (!stop_ && (agreed || observer_.stopRequested())) {
        s_.stop_reason = StopReason::Stopped;
        stop_ = true;
    }
}

bool RunBookkeeping::evaluationDue() const {
    return config_.eval_every_steps > 0 && step_ % config_.eval_every_steps == 0;
}

bool RunBookkeeping::checkpointDue() const {
    return checkpoint_ && config_.checkpoint_every_steps > 0 && step_ % config_.checkpoint_every_steps == 0;
}

void RunBookkeeping::evaluated(EvalRecord& e, Clock::time_point start) {
    if (clock_) clock_->eval(e);
    e.wall_seconds = s_.train_seconds;
    s_.eval_seconds += e.eval_seconds;
    ++s_.evaluations;
    s_.final_accuracy = e.accuracy;
    s_.best_accuracy = std::max(s_.best_accuracy, e.accuracy);
    lastEvalStep_ = step_;
    observer_.onEval(e);
    evalSecondsSinceStep_ += clock_ ? e.eval_seconds : secondsSince(start);
    if (config_.target_accuracy > 0.0 && !s_.time_to_target && e.accuracy >= config_.target_accuracy) {
        s_.time_to_target = s_.train_seconds;
        s_.step_at_target = step_;
        if (config_.stop_at_target) {
            s_.stop_reason = StopReason::TargetAccuracy;
            stop_ = true;
        }
    }
}

void RunBookkeeping::checkpoint(Clock::time_point start) {
    TrainProgress at;
    at.step = step_;
    at.epoch = currentEpoch_;
    at.batch_in_epoch = batchInEpoch_;
    at.evaluated_at_step = lastEvalStep_ == step_;
    at.summary = s_;
    checkpoint_(at);
    lastCheckpointStep_ = step_;
    checkpointSecondsSinceStep_ += secondsSince(start);
}

void RunBookkeeping::trainingEnded(int64_t skippedRecords) {
    if (!s_.stop_reason) s_.stop_reason = StopReason::Epochs;
    s_.skipped_records = skippedRecords;
}

bool RunBookkeeping::finalEvaluationDue() const {
    const bool evaluates = config_.eval_every_steps > 0 || config_.eval_at_epoch_end;
    return evaluates && step_ > 0 && lastEvalStep_ != step_ && s_.stop_reason != StopReason::TargetAccuracy;
}

bool RunBookkeeping::finalCheckpointDue() const {
    return checkpoint_ && config_.checkpoint_at_end && step_ > 0 && lastCheckpointStep_ != step_;
}

RunSummary RunBookkeeping::summary() const {
    RunSummary s = s_;
    s.throughput = steadySamples_ > 0 ? static_cast<double>(steadySamples_) / steadySeconds_
                   : s_.train_seconds > 0 ? static_cast<double>(allSamples_) / s_.train_seconds : 0.0;
    return s;
}

void RunBookkeeping::waited(double seconds) {
    if (clock_)
        s_.host_seconds += seconds;
    else
        s_.train_seconds += seconds;
}

}  // namespace trainbench::engine
