#pragma once
// The training loop of a synchronous strategy: each step runs to its end (every replica updated)
// before the next batch is fetched, so its record is complete at once and goes to the observer
// right after it.
#include "engine/strategy/strategy.h"
#include "engine/telemetry/runrecords.h"
#include "engine/train/runbookkeeping.h"
#include "engine/train/traininput.h"

namespace trainbench::engine {

class Trainer;

class SynchronousLoop {
public:
    // All must outlive the loop; `trainer` evaluates (Trainer::evaluate).
    SynchronousLoop(Trainer& trainer, Strategy& strategy, TrainInput& input, RunBookkeeping& book)
        : trainer_(trainer), strategy_(strategy), input_(input), book_(book) {}
    RunSummary run();

private:
    void evaluate();
    void checkpoint();

    Trainer& trainer_;
    Strategy& strategy_;
    TrainInput& input_;
    RunBookkeeping& book_;
};

}  // namespace trainbench::engine
