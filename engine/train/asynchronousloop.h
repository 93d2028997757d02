#pragma once
// The training loop of an asynchronous strategy (parameter_server): each batch is handed to a free
// worker (dispatch) and the loop goes on to the next one; steps finish later and out of order
// (completed). Records go to the observer in step order: a step waits in `pending_` until it and
// every earlier step have finished. Evaluations, checkpoints and the end of the run first wait for
// every dispatched step (drain), so that they see all of them applied.
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "engine/strategy/strategy.h"
#include "engine/telemetry/runrecords.h"
#include "engine/train/runbookkeeping.h"
#include "engine/train/traininput.h"

namespace trainbench::engine {

class Trainer;

class AsynchronousLoop {
public:
    // All must outlive the loop; `trainer` evaluates (Trainer::evaluate).
    AsynchronousLoop(Trainer& trainer, Strategy& strategy, TrainInput& input, RunBookkeeping& book)
        : trainer_(trainer), strategy_(strategy), input_(input), book_(book) {}
    RunSummary run();

private:
    // Fills in the records of the steps that finished; records, in order, those that can be.
    void absorb(std::vector<StrategyStep> done);
    // Waits for every dispatched step. The wait is training time, charged to the last step dispatched.
    void drain();
    void evaluate();
    void checkpoint();

    Trainer& trainer_;
    Strategy& strategy_;
    TrainInput& input_;
    RunBookkeeping& book_;
    std::map<int64_t, StepRecord> pending_;  // dispatched steps not recorded yet, by step
    std::set<int64_t> finished_;             // those of them that finished
};

}  // namespace trainbench::engine
