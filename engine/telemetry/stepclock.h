#pragma once
// Which clock a run's durations are on. By default the trainer times steps and evaluations on this
// host's steady clock; a run on emulated devices gives it a virtual clock instead
// (engine/emulation/virtualclock.h), which replaces each measured duration with what the target
// hardware would take. The numerics are the same either way.
#include "engine/telemetry/runrecords.h"

namespace trainbench::engine {

class StepClock {
public:
    virtual ~StepClock() = default;
    // A step was measured: rewrite step_seconds, its breakdown (input, forward, backward, optimizer,
    // exposed communication, other), comm/wait seconds and its replicas' figures in this clock. An
    // asynchronous step comes twice (dispatched, then with its worker's record): the same charge.
    virtual void step(StepRecord& record) = 0;
    // An evaluation of `record.samples` test examples was measured: rewrite eval_seconds.
    virtual void eval(EvalRecord& record) = 0;
};

}  // namespace trainbench::engine
