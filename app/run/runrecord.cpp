#include "app/run/runrecord.h"

#include <filesystem>
#include <stdexcept>

#include "app/run/checkpointmetadata.h"
#include "profiler/store/runattributes.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

namespace {

profiler::RunSpec specFor(const Experiment& x, const Placement& p, const DevicePlan& d) {
    profiler::RunSpec spec;
    spec.name = x.name;
    if (!x.source_path.empty()) spec.experiment_file = x.source_path;
    spec.config_json = x.resolved.dump();
    spec.strategy = engine::strategyKindName(x.strategy.type);
    spec.devices = p.devices;
    spec.replicas = p.replicas;
    spec.global_batch = p.globalBatch;
    spec.threads = p.threadsPerReplica * p.replicas;
    spec.dataset = x.data.dataset;
    spec.model = engine::modelName(x.model);
    if (x.train.target_accuracy > 0) spec.target_accuracy = x.train.target_accuracy;
    spec.clock = d.emulated ? "virtual" : "wall";
    if (!d.spec.id.empty()) spec.device_type = d.spec.id;
    spec.device_count = d.device_count;
    spec.price_per_device_hour = d.price_per_device_hour;
    spec.data_fraction = x.data.fraction;
    return spec;
}

}  // namespace

RunRecord openRunRecord(const RunRequest& request, const RunPlan& plan, int rank) {
    const Experiment& x = request.experiment;
    RunRecord r;
    // Resuming: every rank reads the checkpoint (the same file), the chief reopens its run.
    if (request.resume) {
        if (x.train.checkpoint_path.empty())
            throw std::invalid_argument("cannot resume: the experiment has no train.checkpoint_path");
        r.resumeFrom = engine::Checkpoint::read(x.train.checkpoint_path);
        r.progress = progressFromMetadata(*r.resumeFrom);
    }
    // A warm start's source is read the same way, by every rank; a resumed run has its own checkpoint.
    if (!r.resumeFrom && x.warm_start.given()) r.warm = openWarmStart(x.warm_start, request.dbPath);
    if (rank == 0) {
        if (r.progress) {
            r.writer = std::make_unique<profiler::RunWriter>(
                request.dbPath, profiler::ResumeRun{profiler::RunId{runIdFromMetadata(*r.resumeFrom)}, r.progress->step});
        } else {
            profiler::RunSpec spec = specFor(x, plan.place, plan.devices);
            if (r.warm) spec.warm_start_run = r.warm->run;
            r.writer = std::make_unique<profiler::RunWriter>(request.dbPath, spec);
        }
    }
    if (r.writer && request.restarts > 0)
        r.writer->attributes({{runattr::kJobRestarts, std::to_string(request.restarts)},
                              {runattr::kJobResumedFromStep, std::to_string(r.progress ? r.progress->step : 0)}});
    if (r.writer && r.warm) r.writer->attributes(r.warm->attributes());
    r.checkpointPath = std::filesystem::absolute(
        !x.train.checkpoint_path.empty()
            ? std::filesystem::path(x.train.checkpoint_path)
            : std::filesystem::path(request.dbPath).parent_path() / "checkpoints" /
                  ("run-" + std::to_string(r.runId().value) + ".ckpt")).string();
    return r;
}

void startFromRecord(engine::Strategy& strategy, const RunRecord& record, const Experiment& x,
                     const std::function<void(const std::string&)>& say) {
    if (record.resumeFrom) {
        // A run that carried another run's optimizer state resumes with that state's count of updates.
        if (const int64_t before = optimizerStepsBeforeFromMetadata(*record.resumeFrom); before > 0)
            strategy.warmStart(*record.resumeFrom, {.carry_optimizer = true, .optimizer_steps = before});
        else
            strategy.restore(*record.resumeFrom);
        say("resumed from " + x.train.checkpoint_path + " at step " + std::to_string(record.progress->step));
    } else if (record.warm) {
        record.warm->startFrom(strategy);
        say("warm start from " + record.warm->summary());
    }
}

}  // namespace trainbench::app
