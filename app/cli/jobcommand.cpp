// `trainbench-cli run` of a multi_worker or parameter_server experiment: the whole job on this
// machine, supervised by app::JobSupervisor (app/job/). This front-end says how a task starts (one
// `trainbench-cli worker` process per task, with TF_CONFIG naming its task and the job's random
// token in its environment), where the checkpoints go, and what is printed and recorded at the end.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/stopsignals.h"
#include "app/experiment/experiment.h"
#include "app/job/jobsupervisor.h"
#include "app/job/mpiruntaskhost.h"
#include "app/job/processtaskhost.h"
#include "app/run/exitcodes.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/strategy/clusterspec.h"
#include "profiler/store/runstore.h"
#include "profiler/trace/chrometrace.h"

extern char** environ;

namespace trainbench::cli {

namespace {

// The command of one task: this executable's `worker` command, in this environment but for the
// job's variables.
app::TaskCommand taskCommand(const RunArgs& args, const std::vector<std::string>& overrides,
                             engine::StrategyKind strategy, const app::TaskStart& start) {
    app::TaskCommand c;
    c.program = "/proc/self/exe";
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "TF_CONFIG=", 10) != 0 && std::strncmp(*e, "TRAINBENCH_JOB_", 15) != 0)
            c.env.emplace_back(*e);
    c.env.push_back("TF_CONFIG=" + engine::clusterSpecJson(start.spec));
    c.env.push_back(std::string(kJobTokenVariable) + "=" + start.token);
    if (start.restarts > 0) c.env.push_back(std::string(kJobRestartsVariable) + "=" + std::to_string(start.restarts));
    c.env.push_back(std::string(kJobLauncherVariable) + "=" + std::to_string(::getpid()));
    c.argv = {"trainbench-cli", "worker", args.file, "--db", args.db};
    for (const std::string& o : overrides) {
        c.argv.push_back("--set");
        c.argv.push_back(o);
    }
    if (args.quiet || start.rank > 0) c.argv.push_back("-q");
    // multi_worker ranks each trace their steps (the launcher merges the files); in a
    // parameter_server job the chief's dispatching is the job's step.
    if (!args.trace.empty() && (strategy == engine::StrategyKind::MultiWorker || start.task.type == "chief")) {
        c.argv.insert(c.argv.end(), {"--trace", args.trace, "--trace-steps", args.traceSteps});
    }
    return c;
}

// strategy.collective "mpi": the command every rank runs under mpirun. No TF_CONFIG and no token: a
// rank's place is its MPI rank and its peers are the ones mpirun started. This executable by its
// path (mpirun would read /proc/self/exe as its own).
app::TaskCommand mpiRankCommand(const RunArgs& args, const std::vector<std::string>& overrides, const app::TaskStart& start) {
    app::TaskCommand c;
    c.program = std::filesystem::read_symlink("/proc/self/exe").string();
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "TF_CONFIG=", 10) != 0 && std::strncmp(*e, "TRAINBENCH_JOB_", 15) != 0)
            c.env.emplace_back(*e);
    if (start.restarts > 0) c.env.push_back(std::string(kJobRestartsVariable) + "=" + std::to_string(start.restarts));
    c.argv = {"trainbench-cli", "worker", args.file, "--db", args.db};
    for (const std::string& o : overrides) {
        c.argv.push_back("--set");
        c.argv.push_back(o);
    }
    if (args.quiet) c.argv.push_back("-q");
    if (!args.trace.empty()) c.argv.insert(c.argv.end(), {"--trace", args.trace, "--trace-steps", args.traceSteps});
    return c;
}

// One trace of the whole job from the ranks' files (which are then removed).
int mergeRankTraces(const std::string& path, int ranks, int exitCode) {
    std::vector<std::string> parts;
    for (int r = 0; r < ranks; ++r) parts.push_back(profiler::rankTracePath(path, r));
    try {
        profiler::mergeChromeTraces(parts, path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trace: cannot merge the ranks' traces into %s: %s\n", path.c_str(), e.what());
        return exitCode == kExitOk ? kExitIo : exitCode;
    }
    for (const std::string& p : parts) std::filesystem::remove(p);
    std::fprintf(stderr, "trace: %d ranks merged into %s\n", ranks, path.c_str());
    return exitCode;
}

// The chief's run tells the whole story of a failed job. A run the chief left unfinished becomes
// 'failed' with the job's failure: the launcher ended the chief, which can be left waiting in a
// collective after a peer died (Gloo does not fail a send queued to a connection that then closes;
// it waits for the timeout), or something killed it. A run the chief failed itself gets what the
// other tasks did added, which it could not see: its error only says a connection closed.
void recordOnTheChiefsRun(const std::string& db, const app::IncarnationResult& r) {
    if (r.chief.pid <= 0 || !std::filesystem::exists(db)) return;  // the chief never made a store
    try {
        profiler::RunStore store = profiler::RunStore::open(db);
        store.recordJobFailure(r.chief, r.failure, r.othersFailure);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cannot record the job's failure on its run in %s: %s\n", db.c_str(), e.what());
    }
}

}  // namespace

int launchLocalJob(const RunArgs& args, const app::Experiment& experiment, const StopSignals& signals) {
    const engine::StrategyKind strategy = experiment.strategy.type;
    const std::string strategyName(engine::strategyKindName(strategy));
    const int workers = experiment.strategy.replicas;
    const int servers = experiment.strategy.parameter_servers;
    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(experiment.strategy.timeout_s * 1000));
    // Checkpoints go to a file every incarnation of the job knows: the one the experiment names, or
    // one per job next to the run store.
    std::vector<std::string> overrides = args.overrides;
    std::string checkpoint = experiment.train.checkpoint_path;
    if (experiment.train.checkpoint_every_steps > 0 && checkpoint.empty()) {
        const std::string id = engine::RendezvousServer::randomToken().substr(0, 12);
        checkpoint = std::filesystem::absolute(std::filesystem::path(args.db).parent_path() / "checkpoints" /
                                               ("job-" + id + ".ckpt"))
                         .string();
        overrides.push_back("train.checkpoint_path=" + checkpoint);
    }
    app::JobSpec spec;
    spec.kind = strategy;
    spec.workers = workers;
    spec.servers = servers;
    spec.timeout = timeout;
    spec.maxRestarts = experiment.strategy.max_restarts;
    spec.checkpoint = checkpoint;
    spec.quiet = args.quiet;
    const bool mpi = strategy == engine::StrategyKind::MultiWorker &&
                     experiment.strategy.collective == engine::CollectiveBackend::Mpi;
    if (mpi) spec.mpiRanks = workers;
    app::ProcessTaskHost processes(
        [&](const app::TaskStart& start) { return taskCommand(args, overrides, strategy, start); });
    app::MpirunTaskHost mpirun(workers, [&](const app::TaskStart& start) { return mpiRankCommand(args, overrides, start); });
    app::TaskHost& host = mpi ? static_cast<app::TaskHost&>(mpirun) : processes;
    app::JobSupervisor supervisor(host, spec, signals.requested(),
                                  [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
    const app::JobOutcome r = supervisor.run();
    if (!r.failed) {
        if (!args.trace.empty() && strategy == engine::StrategyKind::MultiWorker) return mergeRankTraces(args.trace, workers, r.exitCode);
        return r.exitCode;
    }
    recordOnTheChiefsRun(args.db, r.last);
    std::string why;
    if (r.why == app::NoRestart::NoCheckpoint)
        why = "\n  (no checkpoint to restart from: set train.checkpoint_every_steps)";
    else if (r.why == app::NoRestart::NoCheckpointYet)
        why = "\n  (it failed before its first checkpoint)";
    const std::string after = r.restarts ? " after " + std::to_string(r.restarts) + " restart(s)" : "";
    std::fprintf(stderr, "%s job failed%s: %s%s\n", strategyName.c_str(), after.c_str(), r.history.c_str(), why.c_str());
    return kExitRunFailed;
}

}  // namespace trainbench::cli
