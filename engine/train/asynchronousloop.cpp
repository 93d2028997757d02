#include "engine/train/asynchronousloop.h"

#include <utility>

#include "engine/instrument/instrument.h"
#include "engine/train/trainer.h"

namespace trainbench::engine {

RunSummary AsynchronousLoop::run() {
    for (int64_t epoch = book_.firstEpoch(); book_.epochRemains(epoch); ++epoch) {
        book_.startEpoch(epoch, input_.startEpoch(epoch));
        while (book_.mayStep()) {
            const BatchView batch = book_.beginStep(input_);
            if (batch.count == 0) break;  // the epoch is over
            StepRecord rec = book_.startStep(batch.count);
            rec.learning_rate = strategy_.optimizer().learningRate(rec.step);
            strategy_.dispatch(batch, rec.step, book_.stepSeed());
            input_.midpoint();
            // The step's time is the time to hand it over (input, waiting for a free worker): the
            // job's time per step, as the loop of a synchronous one is. On a clock it is charged
            // now, in step order, and the record keeps the wall time it was charged at.
            book_.endStep(rec);
            input_.recordStages(rec);
            pending_.emplace(rec.step, std::move(rec));
            absorb(strategy_.completed(/*all=*/false));

            if (book_.evaluationDue()) evaluate();
            if (book_.checkpointDue()) checkpoint();
            book_.pollStop(/*agreed=*/false);
        }
        if (book_.stopped()) break;
        if (book_.epochCompleted(epoch)) evaluate();
    }
    drain();
    book_.trainingEnded(input_.skippedRecords());
    if (book_.finalEvaluationDue()) evaluate();
    if (book_.finalCheckpointDue()) checkpoint();
    return book_.summary();
}

void AsynchronousLoop::absorb(std::vector<StrategyStep> done) {
    for (StrategyStep& r : done) {
        auto it = pending_.find(r.step);
        if (it == pending_.end()) continue;  // a duplicate (a rescheduled step that both workers finished)
        StepRecord& rec = it->second;
        rec.loss = r.loss;
        rec.comm_seconds = r.comm_seconds;
        rec.wait_seconds = r.wait_seconds;
        rec.replicas = std::move(r.replicas);
        rec.updates = std::move(r.updates);
        // The worker's measured figures arrive now: the clock charges them too (the step's own
        // seconds are the ones it charged at dispatch).
        if (StepClock* clock = book_.clock()) clock->step(rec);
        finished_.insert(r.step);
    }
    while (!pending_.empty() && finished_.count(pending_.begin()->first)) {
        StepRecord& rec = pending_.begin()->second;
        // On the host's clock a step's wall time is when its record arrives (the waits for it included).
        if (!book_.clock()) rec.wall_seconds = book_.trainSeconds();
        book_.record(rec);
        finished_.erase(pending_.begin()->first);
        pending_.erase(pending_.begin());
    }
}

void AsynchronousLoop::drain() {
    const auto t = RunBookkeeping::Clock::now();
    std::vector<StrategyStep> done = strategy_.completed(/*all=*/true);
    if (!pending_.empty()) {  // (with nothing pending there was nothing to wait for)
        const double waited = RunBookkeeping::secondsSince(t);
        book_.waited(waited);
        if (!book_.clock()) pending_.rbegin()->second.step_seconds += waited;
    }
    absorb(std::move(done));
}

void AsynchronousLoop::evaluate() {
    TB_PHASE(Evaluation);
    const auto start = RunBookkeeping::Clock::now();
    drain();
    strategy_.fetchState(/*optimizerToo=*/false);
    EvalRecord e = trainer_.evaluate(book_.step(), book_.epoch());
    book_.evaluated(e, start);
}

void AsynchronousLoop::checkpoint() {
    TB_PHASE(Checkpoint);
    const auto start = RunBookkeeping::Clock::now();
    drain();
    strategy_.fetchState(/*optimizerToo=*/true);
    book_.checkpoint(start);
}

}  // namespace trainbench::engine
