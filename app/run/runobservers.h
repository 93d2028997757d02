#pragma once
// Stage 5 of a run (runExperiment): what watches the training. The emulation clock (a virtual
// clock, or a parameter_server job's clock) times it on emulated devices; the profiler of the
// process that records the run; the checkpoint hook of the chief; the trace window of --trace; and
// the observer that forwards every step and evaluation to the store and the display.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/run/recordingobserver.h"
#include "app/run/runner.h"
#include "app/run/runplan.h"
#include "app/run/runprofiler.h"
#include "app/run/runrecord.h"
#include "engine/emulation/devicememory.h"
#include "engine/emulation/parameterserverclock.h"
#include "engine/emulation/virtualclock.h"
#include "engine/strategy/strategy.h"
#include "engine/train/trainer.h"
#include "profiler/trace/chrometrace.h"

namespace trainbench::app {

using Say = std::function<void(const std::string&)>;

// What times the steps: this host's wall clock (both null), or an emulated device's.
struct RunClock {
    std::unique_ptr<engine::VirtualClock> virtualClock;
    std::unique_ptr<engine::ParameterServerClock> serverClock;  // an emulated parameter_server job
    engine::StepClock* get() const;
};

// On emulated devices: the clock, said through `say` and kept as virtual.* attributes (`writer`
// may be null). `memory`: buildStrategy's footprint (set when the plan is emulated).
RunClock attachClock(const RunRequest& request, const RunPlan& plan, const engine::Dims& shape, int64_t classes,
                     const std::optional<engine::MemoryCheck>& memory, const Say& say, profiler::RunWriter* writer);

// The profiler of the process that records the run (`writer` set), started; null elsewhere and for
// a parameter_server chief, which trains nothing itself.
std::unique_ptr<RunProfiler> startProfiler(const RunRequest& request, const RunPlan& plan, engine::Strategy& strategy,
                                           const RunClock& clock, const std::optional<engine::MemoryCheck>& memory,
                                           profiler::RunWriter* writer);

struct RunObservers {
    engine::Trainer::CheckpointHook checkpoint;           // empty when nothing is checkpointed
    std::unique_ptr<profiler::ChromeTraceWriter> trace;   // --trace
    std::unique_ptr<RecordingObserver> recorder;
};

// The checkpoint hook (the chief, when train.checkpoint_* asks; its settings kept as checkpoint.*
// attributes), the trace window and the recording observer. `profile` (may be null) is told of
// every step. `strategy`, `record` and `profile` must outlive the observers.
RunObservers attachObservers(const RunRequest& request, engine::Strategy& strategy, RunRecord& record, int rank,
                             RunProfiler* profile);

// After training: the trace's last events drained and the file written (a task of a multi_worker
// job writes tracePath.rank<N>). Returns why it could not be written, or "" when it was.
std::string writeTrace(profiler::ChromeTraceWriter& trace, const RunRequest& request, int rank, const Say& say);

}  // namespace trainbench::app
