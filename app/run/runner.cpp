#include "app/run/runner.h"

#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>

#include "app/run/aftertraining.h"
#include "app/run/deviceplan.h"
#include "app/run/parameterservertasks.h"
#include "app/run/rundata.h"
#include "app/run/runfinish.h"
#include "app/run/runobservers.h"
#include "app/run/runplan.h"
#include "app/run/runprofiler.h"
#include "app/run/runrecord.h"
#include "app/run/runstrategy.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/train/trainer.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

namespace {

// The chief of a multi_worker job serves the rendezvous store before anything slow, so the others
// find it early.
std::unique_ptr<engine::RendezvousServer> serveRendezvous(const RunRequest& request) {
    engine::RendezvousServerConfig sc;
    sc.host = request.cluster->coordinator().host;
    sc.port = static_cast<uint16_t>(request.cluster->coordinator().port);
    sc.token = request.jobToken;
    return std::make_unique<engine::RendezvousServer>(sc);
}

}  // namespace

// The stages, in order: plan devices, (a parameter_server job's ps and worker tasks leave here),
// open the run record, open the data, build the model and strategy, attach the observers (clock,
// profiler, checkpoint hook, trace, recorder), train, finish and classify.
RunOutcome runExperiment(const RunRequest& request) {
    const Experiment& x = request.experiment;
    auto say = [&](const std::string& m) { if (request.log) request.log(m); };
    const RunPlan plan = planRun(x, request.cluster, storeCalibrator(request.dbPath));
    if (x.strategy.type == engine::StrategyKind::ParameterServer)
        if (std::optional<RunOutcome> task = runParameterServerTask(request, plan.place)) return std::move(*task);
    const bool multiWorker = x.strategy.type == engine::StrategyKind::MultiWorker;
    const int rank = multiWorker ? request.cluster->rank() : 0;
    if (rank < 0) throw std::invalid_argument("this task is a '" + request.cluster->task_type +
                                              "' task; multi_worker trains on the chief and workers only");
    std::unique_ptr<engine::RendezvousServer> store;
    // Gloo's ranks meet through it; MPI's were wired up by their launcher.
    if (multiWorker && rank == 0 && x.strategy.collective == engine::CollectiveBackend::Gloo)
        store = serveRendezvous(request);
    RunRecord record = openRunRecord(request, plan, rank);
    RunOutcome out;
    out.id = record.runId();
    std::optional<engine::RunSummary> summary;
    std::unique_ptr<RunProfiler> profile;  // past training: it calibrates once the run is recorded
    try {
        engine::TrainingData data = openRunData(x, plan.place.globalBatch, say, record.writer.get());
        const engine::Dims shape{data.channels, data.height, data.width};
        RunModel built = buildStrategy(request, plan, shape, data.num_classes, say);
        engine::Strategy& strategy = *built.strategy;
        startFromRecord(strategy, record, x, say);
        const RunClock clock = attachClock(request, plan, shape, data.num_classes, built.deviceMemory, say,
                                           record.writer.get());
        profile = startProfiler(request, plan, strategy, clock, built.deviceMemory, record.writer.get());
        RunObservers observers = attachObservers(request, strategy, record, rank, profile.get());
        engine::Trainer trainer(strategy, *data.train, data.test, x.train);
        trainer.setClock(clock.get());
        summary = trainer.run(*observers.recorder, record.progress ? &*record.progress : nullptr, observers.checkpoint);
        finishTraining(request, strategy, data, observers, record, profile.get(), rank, *summary, out, say);
    } catch (const profiler::StoreError&) {
        throw;  // the writer already marked what it could; nothing more can be written
    } catch (const std::exception& e) {
        out.message = e.what();
    }
    finishRun(out, summary, record.writer.get(), profile.get(), request.dbPath);
    return out;
}

}  // namespace trainbench::app
