// `trainbench-cli run`, `worker` and `validate`.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/cli/stopsignals.h"
#include "app/experiment/experiment.h"
#include "app/experiment/sweep.h"
#include "app/run/progressprinter.h"
#include "app/run/runner.h"
#include "engine/collective/mpicollective.h"
#include "engine/strategy/clusterspec.h"
#include "profiler/format/numberformat.h"
#include "profiler/store/storeerror.h"

namespace trainbench::cli {

namespace {
void printSummary(const app::RunOutcome& o, const app::Experiment& x, const std::string& db) {
    const auto& s = o.summary;
    std::printf("run %lld '%s': %s", static_cast<long long>(o.id.value), x.name.c_str(),
                std::string(profiler::runStatusName(o.status)).c_str());
    if (s.stop_reason && o.status != profiler::RunStatus::Failed)
        std::printf(" (%s)", std::string(engine::stopReasonName(*s.stop_reason)).c_str());
    std::printf("\n");
    if (!o.message.empty()) std::printf("  %s\n", o.message.c_str());
    if (s.steps > 0) {
        std::printf("  %lld steps, %lld epoch(s) complete, %s training + %s evaluation\n",
                    static_cast<long long>(s.steps), static_cast<long long>(s.epochs_completed),
                    profiler::clockTime(s.train_seconds).c_str(),
                    profiler::clockTime(s.eval_seconds).c_str());
        if (s.best_accuracy > 0)
            std::printf("  test accuracy %.2f %% (best %.2f %%), last training loss %.4f\n", 100 * s.final_accuracy,
                        100 * s.best_accuracy, s.final_loss);
        if (x.train.target_accuracy > 0) {
            if (s.time_to_target)
                std::printf("  time to %.2f %%: %.2f s (step %lld)\n", 100 * x.train.target_accuracy, *s.time_to_target,
                            static_cast<long long>(s.step_at_target.value_or(0)));
            else
                std::printf("  target %.2f %% not reached\n", 100 * x.train.target_accuracy);
        }
        std::printf("  throughput %.0f samples/s (steady state)\n", s.throughput);
    }
    if (!o.verdict.empty())
        std::printf("  verdict: %s\n  (trainbench-cli profile %lld --db %s)\n", o.verdict.c_str(),
                    static_cast<long long>(o.id.value), db.c_str());
    std::printf("  stored in %s   (trainbench-cli show %lld --db %s)\n", db.c_str(), static_cast<long long>(o.id.value),
                db.c_str());
}

std::string settingsText(const app::SweepPoint& p) {
    std::string out;
    for (const app::SweepSetting& s : p.settings) out += (out.empty() ? "" : ", ") + s.key + "=" + s.value.dump();
    return out;
}

bool isSweep(const std::vector<app::SweepPoint>& points) {
    return points.size() > 1 || !points.front().settings.empty();
}

// --trace with a sweep: one file per point, trace.json -> trace-<point name>.json.
std::string pointTracePath(const std::string& trace, const std::string& pointName) {
    std::filesystem::path p(trace);
    const std::string ext = p.extension().string();
    p.replace_filename(p.stem().string() + "-" + pointName + ext);
    return p.string();
}
}  // namespace

int validateCommand(const std::string& file, const std::vector<std::string>& overrides) {
    try {
        app::Experiment x = app::loadExperimentFile(file, overrides);
        const std::vector<app::SweepPoint> points = app::loadSweepFile(file, overrides);
        std::printf("%s: valid experiment '%s'\n%s\n", file.c_str(), x.name.c_str(), x.resolved.dump(2).c_str());
        if (isSweep(points)) {
            std::printf("sweep of %zu points, each valid (trainbench-cli run runs them one after the other):\n",
                        points.size());
            for (std::size_t i = 0; i < points.size(); ++i)
                std::printf("  %zu. %s  (%s)\n", i + 1, points[i].name.c_str(), settingsText(points[i]).c_str());
        }
        return kExitOk;
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    }
}

namespace {

// Trains `experiment` in this process (one task of a job when `cluster` is set) and prints the outcome.
int trainHere(const RunArgs& args, const app::Experiment& experiment, const StopSignals& signals,
              const std::optional<engine::ClusterSpec>& cluster, const std::string& token, int restarts = 0) {
    const bool interactive = !args.quiet && isatty(STDERR_FILENO);
    app::ProgressPrinter progress(stderr, interactive, experiment.train.epochs);
    app::RunRequest req;
    req.experiment = experiment;
    req.dbPath = args.db;
    req.stop = &signals.requested();
    req.cluster = cluster;
    req.jobToken = token;
    req.resume = restarts > 0;
    req.restarts = restarts;
    req.tracePath = args.trace;
    if (!args.trace.empty()) {
        // Validated by the command line (traceStepsValid) before anything runs.
        const auto colon = args.traceSteps.find(':');
        req.traceFirst = std::stoll(args.traceSteps.substr(0, colon));
        req.traceLast = std::stoll(args.traceSteps.substr(colon + 1));
    }
    if (!args.quiet) {
        req.observer = &progress;
        req.log = [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); };
    }
    app::RunOutcome outcome;
    try {
        if (!args.quiet) std::fprintf(stderr, "training '%s' -> %s\n", experiment.name.c_str(), args.db.c_str());
        outcome = app::runExperiment(req);
    } catch (const profiler::StoreError& e) {
        progress.finish();
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    } catch (const std::exception& e) {  // before a run existed: e.g. the job's store could not listen
        progress.finish();
        std::fprintf(stderr, "%s\n", e.what());
        return kExitRunFailed;
    }
    progress.finish();
    const bool chief = !cluster || cluster->task_type == "chief" || (cluster->chief.empty() && cluster->rank() == 0);
    if (outcome.status == profiler::RunStatus::Failed) {
        const std::string who = chief ? "run " + std::to_string(outcome.id.value)
                                : experiment.strategy.type == engine::StrategyKind::MultiWorker
                                    ? "rank " + std::to_string(cluster->rank())
                                    : cluster->task_type + " " + std::to_string(cluster->task_index);
        std::fprintf(stderr, "%s failed: %s\n", who.c_str(), outcome.message.c_str());
    }
    if (chief) printSummary(outcome, experiment, args.db);
    if (!outcome.outputError.empty()) std::fprintf(stderr, "%s\n", outcome.outputError.c_str());
    switch (outcome.status) {
        case profiler::RunStatus::Completed: return outcome.outputError.empty() ? kExitOk : kExitIo;
        case profiler::RunStatus::Stopped: return kExitStopped;
        default: return kExitRunFailed;
    }
}

// A point of a sweep or the whole experiment: trained here, or as a job of worker processes.
int runOne(const RunArgs& args, const app::Experiment& experiment, const StopSignals& signals) {
    if (engine::isMultiProcess(experiment.strategy.type))
        return launchLocalJob(args, experiment, signals);
    return trainHere(args, experiment, signals, std::nullopt, {});
}

}  // namespace

int runCommand(const RunArgs& args, const StopSignals& signals) {
    std::vector<app::SweepPoint> points;
    try {
        // Every point of a sweep is checked before the first one runs.
        points = app::loadSweepFile(args.file, args.overrides);
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    }
    if (!isSweep(points)) return runOne(args, points.front().experiment, signals);

    // One run per point, one after the other; a failed point does not stop the others, a stop request does.
    int result = kExitOk;
    std::size_t completed = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const app::SweepPoint& point = points[i];
        std::printf("sweep point %zu/%zu: %s  (%s)\n", i + 1, points.size(), point.name.c_str(),
                    settingsText(point).c_str());
        std::fflush(stdout);
        RunArgs pointArgs = args;
        // The point's overrides travel with it, so a job's worker processes load the same point.
        pointArgs.overrides.insert(pointArgs.overrides.end(), point.overrides.begin(), point.overrides.end());
        if (!args.trace.empty()) pointArgs.trace = pointTracePath(args.trace, point.name);
        const int code = runOne(pointArgs, point.experiment, signals);
        if (code == kExitOk) ++completed;
        if (code == kExitStopped || signals.requested().load()) {
            std::printf("sweep stopped at point %zu of %zu; the rest did not run\n", i + 1, points.size());
            return kExitStopped;
        }
        if (result == kExitOk) result = code;
    }
    std::printf("sweep: %zu of %zu points completed\n", completed, points.size());
    return result;
}

namespace {

// A worker of a job whose processes an MPI launcher started (strategy.collective "mpi"): its place in
// the job is its MPI rank, whatever TF_CONFIG's task says (every rank gets the same environment), and
// a job without TF_CONFIG (mpirun or srun from a launch script) is one of that many trainers. Ranks
// after the first are quiet; each dies with its launcher, as nothing can go on without it.
int mpiWorker(RunArgs args, const app::Experiment& experiment, std::optional<engine::ClusterSpec> cluster,
              const StopSignals& signals) {
    engine::MpiWorld world;
    try {
        world = engine::initMpi();
        if (!cluster) cluster = engine::localClusterSpec(world.size, 0, 1);  // addresses unused: MPI is wired up
        cluster = engine::withTrainerRank(*cluster, world.rank, world.size);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "worker: %s\n", e.what());
        return kExitUsage;
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (world.rank > 0) args.quiet = true;
    const char* token = std::getenv(kJobTokenVariable);  // not needed: no trainbench connections
    const char* restarts = std::getenv(kJobRestartsVariable);
    const int code = trainHere(args, experiment, signals, cluster, token ? token : "", restarts ? std::atoi(restarts) : 0);
    engine::finishMpi(code == kExitOk || code == kExitStopped);
    return code;
}

}  // namespace

int workerCommand(const RunArgs& args, const StopSignals& signals) {
    app::Experiment experiment;
    std::optional<engine::ClusterSpec> cluster;
    try {
        experiment = app::loadExperimentFile(args.file, args.overrides);
        cluster = engine::clusterSpecFromEnvironment();
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    }
    if (experiment.strategy.type == engine::StrategyKind::MultiWorker &&
        experiment.strategy.collective == engine::CollectiveBackend::Mpi)
        return mpiWorker(args, experiment, cluster, signals);
    if (!cluster) {
        std::fprintf(stderr, "worker: TF_CONFIG is not set; it names the job's tasks and this one (docs/cli.md)\n");
        return kExitUsage;
    }
    if (!engine::isMultiProcess(experiment.strategy.type)) {
        std::fprintf(stderr, "worker: %s has strategy.type '%s'; a job's tasks need 'multi_worker' or 'parameter_server'\n",
                     args.file.c_str(), std::string(engine::strategyKindName(experiment.strategy.type)).c_str());
        return kExitUsage;
    }
    const char* token = std::getenv(kJobTokenVariable);
    if (token == nullptr || *token == '\0') {
        std::fprintf(stderr, "worker: %s is not set; every task of a job needs the job's token\n", kJobTokenVariable);
        return kExitUsage;
    }
    // Started by a local launcher: stop (SIGTERM, as a stop request) if it dies, as the tasks do not
    // share its process group and would not hear a Ctrl-C meant for the job.
    if (const char* launcher = std::getenv(kJobLauncherVariable)) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != static_cast<pid_t>(std::atoll(launcher))) {
            std::fprintf(stderr, "worker: the job's launcher (pid %s) is gone\n", launcher);
            return kExitRunFailed;
        }
    }
    const char* restarts = std::getenv(kJobRestartsVariable);
    return trainHere(args, experiment, signals, cluster, token, restarts ? std::atoi(restarts) : 0);
}

}  // namespace trainbench::cli
