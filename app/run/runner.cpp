#include "app/run/runner.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/modellayout.h"
#include "engine/checkpoint/trainingcheckpoint.h"
#include "engine/data/pipeline/datasource.h"
#include "engine/device/cpudevice.h"
#include "engine/emulation/devicememory.h"
#include "engine/emulation/virtualclock.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/collective/gloocollective.h"
#include "engine/strategy/mirroredstrategy.h"
#include "engine/strategy/multiworkerstrategy.h"
#include "engine/strategy/parameterserver.h"
#include "engine/strategy/parameterserverstrategy.h"
#include "engine/strategy/psworker.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/train/trainer.h"
#include "engine/util/errors.h"
#include "app/run/checkpointmetadata.h"
#include "app/run/deviceplan.h"
#include "app/run/emulatedparameterservers.h"
#include "app/run/emulatedrun.h"
#include "app/run/numbertext.h"
#include "app/run/runprofiler.h"
#include "app/run/warmstartsource.h"
#include "profiler/plan/quantities.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runwriter.h"
#include "profiler/trace/chrometrace.h"
#include "profiler/trace/traceerror.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

namespace {

// Forwards trainer events to the store and to an optional display, drives the trace window, and
// relays stop requests.
class RecordingObserver : public engine::TrainObserver {
public:
    // writer may be null (a multi_worker task other than the chief), and so may trace.
    // afterStep, if set, runs after every step (the profiler's per-step bookkeeping).
    RecordingObserver(profiler::RunWriter* writer, engine::TrainObserver* display, const std::atomic<bool>* stop,
                      profiler::ChromeTraceWriter* trace = nullptr, int64_t traceLast = 0,
                      std::function<void(int64_t)> afterStep = {})
        : writer_(writer), display_(display), stop_(stop), trace_(trace), traceLast_(traceLast),
          afterStep_(std::move(afterStep)) {}
    void onStart(const engine::TrainPlan& plan) override {
        // What the run is about to do: the GUI's progress bar and ETA, and a report's scale.
        if (writer_)
            writer_->attributes({{runattr::kPlanTotalSteps, std::to_string(plan.total_steps)},
                                 {runattr::kPlanStepsPerEpoch, std::to_string(plan.steps_per_epoch)},
                                 {runattr::kPlanTrainExamples, std::to_string(plan.train_examples)},
                                 {runattr::kPlanTestExamples, std::to_string(plan.test_examples)},
                                 {runattr::kPlanParamCount, std::to_string(plan.param_count)}});
        if (display_) display_->onStart(plan);
    }
    void onStepBegin(int64_t step) override {
        if (trace_) trace_->beginStep(step);
    }
    void onStepEnd(int64_t step) override {
        if (afterStep_) afterStep_(step);
        if (!trace_) return;
        trace_->endStep(step);
        // The engine's buffers hold what the window recorded; outside it there is nothing to drain.
        if (step <= traceLast_ + 1) engine::prof::drainTrace(*trace_);
    }
    void onStep(const engine::StepRecord& s) override {
        if (writer_) writer_->step(s);
        if (display_) display_->onStep(s);
    }
    void onEval(const engine::EvalRecord& e) override {
        if (writer_) writer_->eval(e);
        if (display_) display_->onEval(e);
    }
    bool stopRequested() override { return stop_ && stop_->load(std::memory_order_relaxed); }

private:
    profiler::RunWriter* writer_;
    engine::TrainObserver* display_;
    const std::atomic<bool>* stop_;
    profiler::ChromeTraceWriter* trace_;
    int64_t traceLast_;
    std::function<void(int64_t)> afterStep_;
};

// What the strategy section comes to on this machine.
struct Placement {
    int replicas = 1;
    int threadsPerReplica = 1;
    int64_t globalBatch = 0;
    std::string devices;  // "cpu:4" one device of 4 threads; "cpu:1x2" two replicas of 1 thread
};

Placement placementFor(const Experiment& x, const std::optional<engine::ClusterSpec>& cluster,
                       const DevicePlan& devices) {
    Placement p;
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = x.train.threads > 0 ? x.train.threads : cores;
    const bool async = x.strategy.type == engine::StrategyKind::ParameterServer;
    const bool job = engine::isMultiProcess(x.strategy.type);
    if (devices.emulated && !job) {
        // The numerics of every emulated replica run here as one pass over the global batch, on
        // every thread; the replicas are the virtual clock's.
        p.replicas = devices.replicas;
        p.threadsPerReplica = threads;
        p.globalBatch = x.strategy.batch_scope == "per_replica" ? x.train.batch_size * p.replicas : x.train.batch_size;
        p.devices = devices.devices;
        return p;
    }
    // A job's processes run here for real (an emulated job's each stand for one worker's device).
    const bool replicated = x.strategy.type == engine::StrategyKind::Mirrored || job;
    // parameter_server: the workers in the cluster spec (the chief only coordinates).
    p.replicas = !replicated ? 1
                 : cluster   ? (async ? static_cast<int>(cluster->worker.size()) : cluster->trainers())
                             : x.strategy.replicas;
    p.replicas = std::max(p.replicas, 1);
    p.threadsPerReplica = x.strategy.threads_per_replica > 0 ? x.strategy.threads_per_replica
                                                            : std::max(1, threads / p.replicas);
    if (async)  // every step is one worker's batch: the per-replica batch
        p.globalBatch = x.strategy.batch_scope == "per_replica" ? x.train.batch_size
                                                                : std::max<int64_t>(1, x.train.batch_size / p.replicas);
    else
        p.globalBatch = x.strategy.batch_scope == "per_replica" ? x.train.batch_size * p.replicas : x.train.batch_size;
    p.devices = devices.emulated ? devices.devices
                                 : "cpu:" + std::to_string(p.threadsPerReplica) + (replicated ? "x" + std::to_string(p.replicas) : "");
    return p;
}

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
    spec.model = x.model.preset.empty() ? "custom(" + std::to_string(x.model.layers.size()) + " layers)" : x.model.preset;
    if (x.train.target_accuracy > 0) spec.target_accuracy = x.train.target_accuracy;
    spec.clock = d.emulated ? "virtual" : "wall";
    if (!d.spec.id.empty()) spec.device_type = d.spec.id;
    spec.device_count = d.device_count;
    spec.price_per_device_hour = d.price_per_device_hour;
    spec.data_fraction = x.data.fraction;
    return spec;
}

// What the input pipeline runs with, kept with the run (autotune's choice in particular).
std::vector<std::pair<std::string, std::string>> pipelineAttributes(const engine::TrainingData& d) {
    const engine::PipelineChoice& c = d.choice;
    std::vector<std::pair<std::string, std::string>> a = {
        {runattr::kInputSource, d.description},
        {runattr::kInputCycleLength, std::to_string(c.cycle_length)},
        {runattr::kInputParallelReads, c.parallel_reads ? "true" : "false"},
        {runattr::kInputMapParallelCalls, std::to_string(c.map_parallel_calls)},
        {runattr::kInputPrefetch, std::to_string(c.prefetch)},
        {runattr::kInputAutotuned, c.autotuned ? "true" : "false"},
    };
    if (c.autotuned) {
        a.emplace_back(runattr::kInputAutotuneSeconds, profiler::shortestNumber(std::round(c.autotune_seconds * 100) / 100));
        a.emplace_back(runattr::kInputAutotuneTrials, c.notes);
    }
    const engine::StorageConfig& s = d.storage->config();
    a.emplace_back(runattr::kStoragePreset, s.preset);
    a.emplace_back(runattr::kStorageBandwidthMbS, profiler::shortestNumber(s.bandwidth_mb_s));
    a.emplace_back(runattr::kStorageStreamBandwidthMbS, profiler::shortestNumber(s.stream_bandwidth_mb_s));
    a.emplace_back(runattr::kStorageOpenLatencyMs, profiler::shortestNumber(s.open_latency_ms));
    a.emplace_back(runattr::kStorageRequestLatencyMs, profiler::shortestNumber(s.request_latency_ms));
    return a;
}

// A parameter server of a parameter_server job: serves its shard until the coordinator says the
// job is over. It records nothing; the chief does.
RunOutcome serveParameters(const RunRequest& request) {
    const Experiment& x = request.experiment;
    const engine::ClusterSpec& cluster = *request.cluster;
    engine::ParameterServerConfig c;
    c.host = cluster.self().host;
    c.port = static_cast<uint16_t>(cluster.self().port);
    c.token = request.jobToken;
    c.index = static_cast<uint32_t>(cluster.task_index);
    c.optimizer = x.optimizer;
    c.timeout = std::chrono::milliseconds(static_cast<int64_t>(x.strategy.timeout_s * 1000));
    c.connectTimeout = std::max(c.timeout, std::chrono::milliseconds(60'000));  // as a worker's
    engine::ParameterServer server(c);
    if (request.log)
        request.log("parameter server " + std::to_string(cluster.task_index) + " listening on " + cluster.self().text());
    RunOutcome out;
    try {
        out.status = server.waitUntilDone(request.stop) ? profiler::RunStatus::Completed : profiler::RunStatus::Stopped;
    } catch (const std::exception& e) {
        out.message = e.what();
    }
    return out;
}

// A worker of a parameter_server job: trains the steps the coordinator hands it until it is told
// the job is over.
RunOutcome trainSteps(const RunRequest& request, const Placement& place) {
    const Experiment& x = request.experiment;
    const engine::ClusterSpec& cluster = *request.cluster;
    engine::PsWorkerConfig c;
    c.coordinatorHost = cluster.coordinator().host;
    c.coordinatorPort = cluster.coordinator().port;
    c.token = request.jobToken;
    c.index = static_cast<uint32_t>(cluster.task_index);
    c.threads = place.threadsPerReplica;
    c.model = x.model;
    c.seed = x.train.seed;
    c.timeout = std::chrono::milliseconds(static_cast<int64_t>(x.strategy.timeout_s * 1000));
    c.connectTimeout = std::max(c.timeout, std::chrono::milliseconds(60'000));
    RunOutcome out;
    try {
        const engine::PsWorkerSummary done = engine::runParameterServerWorker(c, request.log);
        out.summary.steps = done.steps;
        out.status = profiler::RunStatus::Completed;
    } catch (const std::exception& e) {
        out.message = e.what();
    }
    return out;
}

// What a parameter_server run keeps about its updates (run_attributes).
std::vector<std::pair<std::string, std::string>> parameterServerAttributes(const engine::ParameterServerStats& st,
                                                                           size_t servers) {
    std::vector<int64_t> v = st.staleness;
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v.empty() ? 0 : v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]; };
    double sum = 0;
    for (int64_t x : v) sum += static_cast<double>(x);
    return {{runattr::kPsServers, std::to_string(servers)},
            {runattr::kPsUpdates, std::to_string(v.size())},
            {runattr::kPsStalenessMean, profiler::shortestNumber(v.empty() ? 0.0 : std::round(100 * sum / static_cast<double>(v.size())) / 100)},
            {runattr::kPsStalenessP50, std::to_string(at(0.5))},
            {runattr::kPsStalenessP95, std::to_string(at(0.95))},
            {runattr::kPsStalenessMax, std::to_string(v.empty() ? 0 : v.back())},
            {runattr::kPsRescheduledSteps, std::to_string(st.rescheduled_steps)},
            {runattr::kPsLostWorkers, std::to_string(st.lost_workers)}};
}

}  // namespace

RunOutcome runExperiment(const RunRequest& request) {
    const Experiment& x = request.experiment;
    auto say = [&](const std::string& m) { if (request.log) request.log(m); };
    const bool multiWorker = x.strategy.type == engine::StrategyKind::MultiWorker;
    const bool parameterServer = x.strategy.type == engine::StrategyKind::ParameterServer;
    if ((multiWorker || parameterServer) && !request.cluster)
        throw std::invalid_argument("a " + std::string(engine::strategyKindName(x.strategy.type)) + " experiment runs as a job of processes: start it with "
                                    "`trainbench-cli run`, or each task with `trainbench-cli worker` and TF_CONFIG");
    const int jobWorkers = !request.cluster ? 0
                           : parameterServer ? static_cast<int>(request.cluster->worker.size())
                                             : request.cluster->trainers();
    const DevicePlan devicePlan =
        planDevices(x, storeCalibrator(request.dbPath), jobWorkers,
                    parameterServer && request.cluster ? static_cast<int>(request.cluster->ps.size()) : 0);
    const Placement place = placementFor(x, request.cluster, devicePlan);
    if (parameterServer) {
        const engine::ClusterSpec& c = *request.cluster;
        if (c.chief.empty())
            throw std::invalid_argument("a parameter_server job needs a chief task: it coordinates the workers");
        if (c.ps.empty()) throw std::invalid_argument("a parameter_server job needs at least one ps task");
        if (c.worker.empty()) throw std::invalid_argument("a parameter_server job needs at least one worker task");
        if (c.task_type == "ps") return serveParameters(request);
        if (c.task_type == "worker") return trainSteps(request, place);
        if (c.task_type != "chief")
            throw std::invalid_argument("this task is a '" + c.task_type + "' task; a parameter_server job has chief, "
                                        "worker and ps tasks");
    }
    const int rank = multiWorker ? request.cluster->rank() : 0;
    if (rank < 0) throw std::invalid_argument("this task is a '" + request.cluster->task_type +
                                              "' task; multi_worker trains on the chief and workers only");
    // The chief serves the rendezvous store before anything slow, so the others find it early.
    std::unique_ptr<engine::RendezvousServer> store;
    if (multiWorker && rank == 0) {
        engine::RendezvousServerConfig sc;
        sc.host = request.cluster->coordinator().host;
        sc.port = static_cast<uint16_t>(request.cluster->coordinator().port);
        sc.token = request.jobToken;
        store = std::make_unique<engine::RendezvousServer>(sc);
    }
    // Resuming: every rank reads the checkpoint (the same file), the chief reopens its run.
    std::optional<engine::Checkpoint> resumeFrom;
    std::optional<engine::TrainProgress> progress;
    if (request.resume) {
        if (x.train.checkpoint_path.empty())
            throw std::invalid_argument("cannot resume: the experiment has no train.checkpoint_path");
        resumeFrom = engine::Checkpoint::read(x.train.checkpoint_path);
        progress = progressFromMetadata(*resumeFrom);
    }
    // A warm start's source is read the same way, by every rank; a resumed run has its own checkpoint.
    std::optional<WarmStartSource> warm;
    if (!resumeFrom && x.warm_start.given()) warm = openWarmStart(x.warm_start, request.dbPath);
    std::optional<profiler::RunWriter> writer;
    if (rank == 0) {
        if (progress) {
            writer.emplace(request.dbPath, profiler::ResumeRun{profiler::RunId{runIdFromMetadata(*resumeFrom)},
                                                               progress->step});
        } else {
            profiler::RunSpec spec = specFor(x, place, devicePlan);
            if (warm) spec.warm_start_run = warm->run;
            writer.emplace(request.dbPath, spec);
        }
    }
    RunOutcome out;
    if (writer) out.id = writer->runId();
    if (writer && request.restarts > 0)
        writer->attributes({{runattr::kJobRestarts, std::to_string(request.restarts)},
                            {runattr::kJobResumedFromStep, std::to_string(progress ? progress->step : 0)}});
    if (writer && warm) writer->attributes(warm->attributes());
    // Absolute: a warm start by run id reads it from wherever it is started. (The store records it
    // relative to its folder when it lies inside, and reads it back absolute: RunStoreFolder.)
    const std::string checkpointPath = std::filesystem::absolute(
        !x.train.checkpoint_path.empty()
            ? std::filesystem::path(x.train.checkpoint_path)
            : std::filesystem::path(request.dbPath).parent_path() / "checkpoints" /
                  ("run-" + std::to_string(out.id.value) + ".ckpt")).string();
    std::optional<engine::RunSummary> summary;
    std::optional<RunProfiler> profile;
    try {
        engine::TrainingData data = engine::openTrainingData(x.data, place.globalBatch, x.train.seed, say);
        say("data: " + data.description);
        if (writer && (data.choice.autotuned || engine::usesStreamingPipeline(x.data)))
            writer->attributes(pipelineAttributes(data));
        const engine::Dims shape{data.channels, data.height, data.width};
        // Checked before the model is allocated here: a model that does not fit the device fails now.
        std::optional<engine::MemoryCheck> deviceMemory;
        if (devicePlan.emulated) deviceMemory = fitOnDevice(x, devicePlan, place.globalBatch, shape, data.num_classes);
        std::unique_ptr<engine::CpuDevice> device;
        std::unique_ptr<engine::Model> model;
        std::unique_ptr<engine::Optimizer> optimizer;
        std::unique_ptr<engine::Strategy> strategy;
        engine::ParameterServerStrategy* psStrategy = nullptr;
        if (multiWorker) {
            engine::GlooTransport transport;
            transport.hostname = request.cluster->self().host;
            auto collective = std::make_unique<engine::GlooCollective>(
                rank, place.replicas, request.cluster->coordinator().text(), request.jobToken,
                std::chrono::milliseconds(static_cast<int64_t>(x.strategy.timeout_s * 1000)), transport);
            say("joined the job as rank " + std::to_string(rank) + " of " + std::to_string(place.replicas));
            strategy = std::make_unique<engine::MultiWorkerStrategy>(
                std::move(collective), place.threadsPerReplica, x.model, shape, data.num_classes, x.optimizer,
                x.train.seed, x.strategy.bucket_mb, x.strategy.overlap, request.stop);
        } else if (parameterServer) {
            engine::ParameterServerStrategyConfig pc;
            pc.listen = request.cluster->self();
            pc.token = request.jobToken;
            pc.servers = request.cluster->ps;
            pc.workers = place.replicas;
            pc.threadsPerWorker = place.threadsPerReplica;
            pc.timeout = std::chrono::milliseconds(static_cast<int64_t>(x.strategy.timeout_s * 1000));
            pc.log = request.log;
            auto p = std::make_unique<engine::ParameterServerStrategy>(pc, place.threadsPerReplica, x.model, shape,
                                                                       data.num_classes, x.optimizer, x.train.seed);
            psStrategy = p.get();
            strategy = std::move(p);
        } else if (x.strategy.type == engine::StrategyKind::Mirrored && !devicePlan.emulated) {
            strategy = std::make_unique<engine::MirroredStrategy>(place.replicas, place.threadsPerReplica, x.model, shape,
                                                                  data.num_classes, x.optimizer, x.train.seed,
                                                                  x.strategy.bucket_mb, x.strategy.overlap);
        } else {
            device = std::make_unique<engine::CpuDevice>(place.threadsPerReplica);
            model = std::make_unique<engine::Model>(x.model, shape, data.num_classes, *device, x.train.seed);
            // Emulated replicas each normalise their own part of the batch (per-core batch norm).
            if (devicePlan.emulated && devicePlan.replicas > 1) model->setStatisticsShards(devicePlan.replicas);
            optimizer = engine::Optimizer::create(x.optimizer, model->paramCount());
            strategy = std::make_unique<engine::SingleStrategy>(*model, *optimizer);
        }
        if (devicePlan.emulated)
            say("model: " + std::to_string(strategy->model().paramCount()) + " parameters; " + std::string(engine::strategyKindName(x.strategy.type)) + " on " +
                place.devices + " (emulated: " + std::to_string(place.replicas) + " replica(s), numerics on " +
                std::to_string(place.threadsPerReplica) + " host thread(s)), global batch " +
                std::to_string(place.globalBatch));
        else
            say("model: " + std::to_string(strategy->model().paramCount()) + " parameters; " + strategy->name() + " on " +
                place.devices + " (threads x replicas), global batch " + std::to_string(place.globalBatch));
        if (resumeFrom) {
            // A run that carried another run's optimizer state resumes with that state's count of updates.
            if (const int64_t before = optimizerStepsBeforeFromMetadata(*resumeFrom); before > 0)
                strategy->warmStart(*resumeFrom, {.carry_optimizer = true, .optimizer_steps = before});
            else
                strategy->restore(*resumeFrom);
            say("resumed from " + x.train.checkpoint_path + " at step " + std::to_string(progress->step));
        } else if (warm) {
            warm->startFrom(*strategy);
            say("warm start from " + warm->summary());
        }
        engine::Trainer trainer(*strategy, *data.train, data.test, x.train);
        std::unique_ptr<engine::VirtualClock> virtualClock;
        std::unique_ptr<engine::ParameterServerClock> serverClock;
        if (devicePlan.emulated && parameterServer) {
            serverClock = emulateParameterServers(x, devicePlan, place.globalBatch, shape, data.num_classes,
                                                  infeedOf(x, place.globalBatch, request.dbPath).seconds_per_batch, *deviceMemory, say,
                                                  writer ? &*writer : nullptr);
            trainer.setClock(serverClock.get());
        } else if (devicePlan.emulated) {
            virtualClock = emulate(x, devicePlan, place.globalBatch, shape, data.num_classes, *deviceMemory, say,
                                   writer ? &*writer : nullptr, request.dbPath);
            trainer.setClock(virtualClock.get());
        }
        // The process that records the run profiles it (a parameter_server chief trains nothing itself).
        if (writer && !parameterServer) {
            profile.emplace(x, request.dbPath, place.threadsPerReplica, request.log);
            if (virtualClock)
                profile->setEmulation(emulationProfile(*virtualClock, devicePlan, place.globalBatch, *deviceMemory));
            profile->start(*strategy, std::max<int64_t>(1, place.globalBatch / std::max(1, place.replicas)));
        }
        // Every replica holds the same parameters; the chief (or the only process) saves them.
        engine::Trainer::CheckpointHook hook;
        if (rank == 0 && (x.train.checkpoint_every_steps > 0 || x.train.checkpoint_at_end)) {
            std::filesystem::create_directories(std::filesystem::path(checkpointPath).parent_path());
            writer->attributes({{runattr::kCheckpointPath, checkpointPath},
                                {runattr::kCheckpointEverySteps, std::to_string(x.train.checkpoint_every_steps)},
                                {runattr::kCheckpointAtEnd, x.train.checkpoint_at_end ? "true" : "false"}});
            hook = [&](const engine::TrainProgress& at) {
                engine::CheckpointWriter w;
                engine::saveTraining(w, strategy->model().params(), strategy->model().paramCount(), strategy->optimizer(),
                                     strategy->model().state());
                engine::saveModelLayout(w, strategy->model());
                w.setMetadata(progressMetadata(at, out.id.value, strategy->optimizer().stepsBefore()));
                w.commit(checkpointPath);
            };
        }
        // In a job the stop request travels with the step records, so that every rank stops at the
        // same step; the observer must not stop this rank alone.
        std::optional<profiler::ChromeTraceWriter> trace;
        if (!request.tracePath.empty()) {
            profiler::ChromeTraceOptions to;
            to.rank = multiWorker ? rank : -1;
            to.firstStep = request.traceFirst;
            to.lastStep = request.traceLast;
            trace.emplace(to);
        }
        std::function<void(int64_t)> afterStep;
        if (profile) afterStep = [&](int64_t step) { profile->afterStep(*strategy, step); };
        RecordingObserver observer(writer ? &*writer : nullptr, request.observer, multiWorker ? nullptr : request.stop,
                                   trace ? &*trace : nullptr, request.traceLast, std::move(afterStep));
        summary = trainer.run(observer, progress ? &*progress : nullptr, hook);
        // A streaming source read in full is counted by its first epoch, after the plan was stored.
        if (writer && data.train_examples == 0 && x.data.pipeline.shard_count == 1 && data.train->sourceExamples() > 0)
            writer->attributes({{runattr::kPlanTrainExamples, std::to_string(data.train->sourceExamples())}});
        if (trace) {
            engine::prof::drainTrace(*trace);
            const std::string path =
                multiWorker ? profiler::rankTracePath(request.tracePath, rank) : request.tracePath;
            try {
                trace->write(path);
                const profiler::ChromeTraceStats ts = trace->stats();
                say("trace: steps " + std::to_string(request.traceFirst) + "-" + std::to_string(request.traceLast) +
                    ", " + std::to_string(ts.events) + " events -> " + path +
                    (ts.windowOpened ? "" : " (the run ended before the window opened: no steps in it)"));
            } catch (const profiler::TraceError& e) {
                // The training is whole and recorded, and is profiled to its end; only the extra file is missing.
                out.outputError = e.what();
            }
        }
        if (profile) {
            profile->setEmulatedSteps(summary->steps);
            profile->finish(*strategy, *writer, rank);
        }
        strategy->finish();
        if (psStrategy && writer)
            writer->attributes(parameterServerAttributes(psStrategy->stats(), request.cluster->ps.size()));
    } catch (const profiler::StoreError&) {
        throw;  // the writer already marked what it could; nothing more can be written
    } catch (const std::exception& e) {
        out.message = e.what();
    }
    if (summary) {
        out.summary = *summary;
        out.status = summary->stop_reason == "stopped" ? profiler::RunStatus::Stopped : profiler::RunStatus::Completed;
        if (out.status == profiler::RunStatus::Stopped) out.message = "stopped by the user after step " +
                                                                     std::to_string(summary->steps);
    } else {
        out.status = profiler::RunStatus::Failed;
    }
    if (!out.outputError.empty()) out.message += (out.message.empty() ? "" : "; ") + out.outputError;
    if (writer) {
        writer->finish(out.status, out.summary, out.message);
        if (summary) {
            if (profile) profile->calibrate();
            out.verdict = RunProfiler::classifyStored(request.dbPath, out.id);
        }
    }
    return out;
}

}  // namespace trainbench::app
