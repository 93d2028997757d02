#pragma once
// Stage 7 of a run (runExperiment): how the run ended (completed, stopped, failed, with what
// message), recorded by the process that records it, which then classifies it: the verdict of what
// bounds it, kept in the store and returned in the outcome.
#include <optional>
#include <string>

#include "app/run/runner.h"
#include "app/run/runprofiler.h"
#include "engine/telemetry/runrecords.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

// `summary`: the trainer's, when training ended (by its plan or a stop request); none when it
// failed (out.message says why). `writer` and `profile` may be null (a rank that records nothing,
// a run not profiled). Throws profiler::StoreError when the store cannot be written.
void finishRun(RunOutcome& out, const std::optional<engine::RunSummary>& summary, profiler::RunWriter* writer,
               const RunProfiler* profile, const std::string& dbPath);

}  // namespace trainbench::app
