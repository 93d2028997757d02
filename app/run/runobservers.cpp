#include "app/run/runobservers.h"

#include <algorithm>
#include <filesystem>

#include "app/run/checkpointmetadata.h"
#include "app/run/emulatedparameterservers.h"
#include "app/run/emulatedrun.h"
#include "engine/checkpoint/modellayout.h"
#include "engine/checkpoint/trainingcheckpoint.h"
#include "profiler/trace/traceerror.h"
#include "profiler/store/runattributes.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

engine::StepClock* RunClock::get() const {
    if (virtualClock) return virtualClock.get();
    return serverClock.get();
}

RunClock attachClock(const RunRequest& request, const RunPlan& plan, const engine::Dims& shape, int64_t classes,
                     const std::optional<engine::MemoryCheck>& memory, const Say& say, profiler::RunWriter* writer) {
    const Experiment& x = request.experiment;
    const int64_t globalBatch = plan.place.globalBatch;
    RunClock c;
    if (plan.devices.emulated && x.strategy.type == engine::StrategyKind::ParameterServer)
        c.serverClock =
            emulateParameterServers(x, plan.devices, globalBatch, shape, classes,
                                    infeedOf(x, globalBatch, request.dbPath).seconds_per_batch, *memory, say, writer);
    else if (plan.devices.emulated)
        c.virtualClock = emulate(x, plan.devices, globalBatch, shape, classes, *memory, say, writer, request.dbPath);
    return c;
}

std::unique_ptr<RunProfiler> startProfiler(const RunRequest& request, const RunPlan& plan, engine::Strategy& strategy,
                                           const RunClock& clock, const std::optional<engine::MemoryCheck>& memory,
                                           profiler::RunWriter* writer) {
    if (!writer || request.experiment.strategy.type == engine::StrategyKind::ParameterServer) return nullptr;
    const Placement& place = plan.place;
    auto profile = std::make_unique<RunProfiler>(request.experiment, request.dbPath, place.threadsPerReplica,
                                                 request.log);
    if (clock.virtualClock)
        profile->setEmulation(emulationProfile(*clock.virtualClock, plan.devices, place.globalBatch, *memory));
    profile->start(strategy, std::max<int64_t>(1, place.globalBatch / std::max(1, place.replicas)));
    return profile;
}

RunObservers attachObservers(const RunRequest& request, engine::Strategy& strategy, RunRecord& record, int rank,
                             RunProfiler* profile) {
    const Experiment& x = request.experiment;
    const bool multiWorker = x.strategy.type == engine::StrategyKind::MultiWorker;
    RunObservers o;
    // Every replica holds the same parameters; the chief (or the only process) saves them.
    if (rank == 0 && (x.train.checkpoint_every_steps > 0 || x.train.checkpoint_at_end)) {
        std::filesystem::create_directories(std::filesystem::path(record.checkpointPath).parent_path());
        record.writer->attributes({{runattr::kCheckpointPath, record.checkpointPath},
                                   {runattr::kCheckpointEverySteps, std::to_string(x.train.checkpoint_every_steps)},
                                   {runattr::kCheckpointAtEnd, x.train.checkpoint_at_end ? "true" : "false"}});
        o.checkpoint = [&strategy, path = record.checkpointPath,
                        runId = record.runId().value](const engine::TrainProgress& at) {
            engine::CheckpointWriter w;
            engine::saveTraining(w, strategy.model().params(), strategy.model().paramCount(), strategy.optimizer(),
                                 strategy.model().state());
            engine::saveModelLayout(w, strategy.model());
            w.setMetadata(progressMetadata(at, runId, strategy.optimizer().stepsBefore()));
            w.commit(path);
        };
    }
    if (!request.tracePath.empty()) {
        profiler::ChromeTraceOptions to;
        to.rank = multiWorker ? rank : -1;
        to.firstStep = request.traceFirst;
        to.lastStep = request.traceLast;
        o.trace = std::make_unique<profiler::ChromeTraceWriter>(to);
    }
    std::function<void(int64_t)> afterStep;
    if (profile) afterStep = [profile, &strategy](int64_t step) { profile->afterStep(strategy, step); };
    // In a job the stop request travels with the step records, so that every rank stops at the
    // same step; the observer must not stop this rank alone.
    o.recorder = std::make_unique<RecordingObserver>(record.writer.get(), request.observer,
                                                     multiWorker ? nullptr : request.stop, o.trace.get(),
                                                     request.traceLast, std::move(afterStep));
    return o;
}

std::string writeTrace(profiler::ChromeTraceWriter& trace, const RunRequest& request, int rank, const Say& say) {
    engine::prof::drainTrace(trace);
    const bool multiWorker = request.experiment.strategy.type == engine::StrategyKind::MultiWorker;
    const std::string path = multiWorker ? profiler::rankTracePath(request.tracePath, rank) : request.tracePath;
    try {
        trace.write(path);
        const profiler::ChromeTraceStats ts = trace.stats();
        say("trace: steps " + std::to_string(request.traceFirst) + "-" + std::to_string(request.traceLast) + ", " +
            std::to_string(ts.events) + " events -> " + path +
            (ts.windowOpened ? "" : " (the run ended before the window opened: no steps in it)"));
    } catch (const profiler::TraceError& e) {
        // The training is whole and recorded, and is profiled to its end; only the extra file is missing.
        return e.what();
    }
    return "";
}

}  // namespace trainbench::app
