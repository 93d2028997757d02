#pragma once
// Stage 6b of a run (runExperiment), once the trainer has returned: what follows the last step.
#include <string>

#include "app/run/runner.h"
#include "app/run/runobservers.h"
#include "app/run/runprofiler.h"
#include "app/run/runrecord.h"
#include "engine/data/pipeline/datasource.h"
#include "engine/strategy/strategy.h"
#include "engine/telemetry/runrecords.h"

namespace trainbench::app {

// A streaming source's examples (counted by its first epoch, after the plan was stored), the trace
// file (out.outputError when it cannot be written), the profiler's record of the run, the
// strategy's other tasks told the run is over, and a parameter_server job's update statistics.
// `profile` may be null.
void finishTraining(const RunRequest& request, engine::Strategy& strategy, const engine::TrainingData& data,
                    RunObservers& observers, RunRecord& record, RunProfiler* profile, int rank,
                    const engine::RunSummary& summary, RunOutcome& out, const Say& say);

}  // namespace trainbench::app
