#include "engine/train/synchronousloop.h"

#include <utility>

#include "engine/instrument/instrument.h"
#include "engine/train/trainer.h"

namespace trainbench::engine {

RunSummary SynchronousLoop::run() {
    for (int64_t epoch = book_.firstEpoch(); book_.epochRemains(epoch); ++epoch) {
        book_.startEpoch(epoch, input_.startEpoch(epoch));
        while (book_.mayStep()) {
            const BatchView batch = book_.beginStep(input_);
            if (batch.count == 0) break;  // the epoch is over
            StepRecord rec = book_.startStep(batch.count);
            rec.learning_rate = strategy_.optimizer().learningRate(rec.step);
            StrategyStep r = strategy_.step(batch, rec.step, book_.stepSeed(), [this] { input_.midpoint(); });
            rec.loss = r.loss;
            rec.comm_seconds = r.comm_seconds;
            rec.wait_seconds = r.wait_seconds;
            rec.replicas = std::move(r.replicas);
            book_.endStep(rec);
            input_.recordStages(rec);
            book_.record(rec);

            if (book_.evaluationDue()) evaluate();
            if (book_.checkpointDue()) checkpoint();
            book_.pollStop(r.stop_requested);
        }
        if (book_.stopped()) break;
        if (book_.epochCompleted(epoch)) evaluate();
    }
    book_.trainingEnded(input_.skippedRecords());
    if (book_.finalEvaluationDue()) evaluate();
    if (book_.finalCheckpointDue()) checkpoint();
    return book_.summary();
}

void SynchronousLoop::evaluate() {
    TB_PHASE(Evaluation);
    const auto start = RunBookkeeping::Clock::now();
    strategy_.fetchState(/*optimizerToo=*/false);
    EvalRecord e = trainer_.evaluate(book_.step(), book_.epoch());
    book_.evaluated(e, start);
}

void SynchronousLoop::checkpoint() {
    TB_PHASE(Checkpoint);
    const auto start = RunBookkeeping::Clock::now();
    strategy_.fetchState(/*optimizerToo=*/true);
    book_.checkpoint(start);
}

}  // namespace trainbench::engine
