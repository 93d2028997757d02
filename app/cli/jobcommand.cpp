// `trainbench-cli run` of a multi_worker or parameter_server experiment: the whole job on this
// machine. It starts one `trainbench-cli worker` process per task on loopback, each with TF_CONFIG
// naming its task and the job's random token in its environment, relays a stop request to them, and
// waits. When a task the job cannot do without dies (any task of a synchronous job; the chief or a
// parameter server of an asynchronous one), the others are stopped and the job restarts from its
// last checkpoint or fails naming the task. A parameter_server job carries on without a dead worker:
// its coordinator gives the worker's step to another. A task found stopped (SIGSTOP, a debugger)
// for strategy.timeout_s is ended as if it had died: it makes no progress, and the others would
// give up on it by then anyway.
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/commands.h"
#include "profiler/trace/chrometrace.h"
#include "app/cli/exitcodes.h"
#include "app/cli/jobtask.h"
#include "app/cli/stopsignals.h"
#include "app/experiment/experiment.h"
#include "engine/strategy/clusterspec.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "profiler/store/processidentity.h"
#include "profiler/store/runstore.h"

extern char** environ;

namespace trainbench::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Free TCP ports on loopback, held open together so that they differ, then released for the tasks.
std::vector<int> freeLoopbackPorts(int n) {
    std::vector<int> fds, ports;
    for (int i = 0; i < n; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            throw std::runtime_error(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(errno));
        fds.push_back(fd);
        ports.push_back(ntohs(a.sin_port));
    }
    for (int fd : fds) ::close(fd);
    return ports;
}

struct Incarnation {
    bool failed = false;
    bool stopped = false;  // the user stopped the job
    int exitCode = 0;      // the chief's
    std::string failure;   // which tasks failed and how, the first to die first
    std::string othersFailure;       // the same without the chief: what the chief could not know
    profiler::ProcessIdentity chief;  // whose run the job's failure is recorded on
};

// Starts every task of the job once and waits for all of them. multi_worker: `workers` trainers,
// the first of them the chief. parameter_server: a chief that coordinates, `workers` workers and
// `servers` parameter servers. `timeout` is strategy.timeout_s.
Incarnation runTasks(const RunArgs& args, const std::vector<std::string>& overrides, engine::StrategyKind strategy,
                     int workers, int servers, std::chrono::milliseconds timeout, const StopSignals& signals,
                     int restarts) {
    Incarnation out;
    const bool async = strategy == engine::StrategyKind::ParameterServer;
    std::vector<JobTask> tasks;
    tasks.push_back({"chief", 0});
    for (int i = 0; i < (async ? workers : workers - 1); ++i) tasks.push_back({"worker", i, "", !async});
    for (int i = 0; i < (async ? servers : 0); ++i) tasks.push_back({"ps", i});
    engine::ClusterSpec spec;
    std::string token;
    try {
        const std::vector<int> ports = freeLoopbackPorts(static_cast<int>(tasks.size()));
        for (size_t i = 0; i < tasks.size(); ++i) {
            const engine::HostPort hp{"127.0.0.1", ports[i]};
            (tasks[i].type == "chief" ? spec.chief : tasks[i].type == "ps" ? spec.ps : spec.worker).push_back(hp);
            tasks[i].address = hp.text();
        }
        token = engine::RendezvousServer::randomToken();
    } catch (const std::exception& e) {
        out.failed = true;
        out.failure = std::string("cannot start the job: ") + e.what();
        return out;
    }
    if (!args.quiet) {
        const std::string again = restarts ? " (restart " + std::to_string(restarts) + ")" : "";
        if (async)
            std::fprintf(stderr, "parameter_server job%s: %d worker(s) and %d parameter server(s) on 127.0.0.1, chief at %s\n",
                         again.c_str(), workers, servers, spec.chief[0].text().c_str());
        else
            std::fprintf(stderr, "multi_worker job%s: %d worker process(es) on 127.0.0.1, chief at %s\n", again.c_str(),
                         workers, spec.chief[0].text().c_str());
    }

    // A stopped task (SIGSTOP, a debugger) makes no progress, however long the others wait for it:
    // it is ended (SIGKILL works on a stopped process) and named as the cause.
    auto endStopped = [](JobTask& t, Clock::time_point now) {
        ::kill(t.pid, SIGKILL);
        t.endedStopped = std::chrono::duration_cast<std::chrono::milliseconds>(now - t.stoppedSince.value_or(now));
    };
    // `sig` to every task still running, except that a stopped one is ended (it would not act on
    // it), and that the chief is not asked to stop when the job failed (SIGTERM): it records the
    // run, and a stop request would record a failed job as stopped. It fails on its own once its
    // peers are gone, or is ended with the others after the grace period.
    auto stopAll = [&](int sig) {
        for (JobTask& t : tasks) {
            if (t.done || t.pid <= 0 || t.endedStopped) continue;
            if (sig != SIGINT && processStopped(t.pid)) {
                endStopped(t, Clock::now());
                continue;
            }
            if (sig == SIGTERM && t.type == "chief") continue;
            // A parameter server is not asked to stop: the chief, stopping after its step, sends it
            // Shutdown once the workers are told. Ended by the stop request itself, it closed the
            // workers' connections mid-step and the job failed instead of stopping.
            if (sig == SIGINT && t.type == "ps") continue;
            ::kill(t.pid, sig);
            if (sig == SIGKILL) t.endedHere = true;
        }
    };
    for (size_t r = 0; r < tasks.size(); ++r) {
        engine::ClusterSpec mine = spec;
        mine.task_type = tasks[r].type;
        mine.task_index = tasks[r].index;
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e)
            if (std::strncmp(*e, "TF_CONFIG=", 10) != 0 && std::strncmp(*e, "TRAINBENCH_JOB_", 15) != 0)
                env.emplace_back(*e);
        env.push_back("TF_CONFIG=" + engine::clusterSpecJson(mine));
        env.push_back(std::string(kJobTokenVariable) + "=" + token);
        if (restarts > 0) env.push_back(std::string(kJobRestartsVariable) + "=" + std::to_string(restarts));
        env.push_back(std::string(kJobLauncherVariable) + "=" + std::to_string(::getpid()));
        std::vector<std::string> argv = {"trainbench-cli", "worker", args.file, "--db", args.db};
        for (const std::string& o : overrides) {
            argv.push_back("--set");
            argv.push_back(o);
        }
        if (args.quiet || r > 0) argv.push_back("-q");
        // multi_worker ranks each trace their steps (the launcher merges the files); in a
        // parameter_server job the chief's dispatching is the job's step.
        if (!args.trace.empty() && (strategy == engine::StrategyKind::MultiWorker || tasks[r].type == "chief")) {
            argv.insert(argv.end(), {"--trace", args.trace, "--trace-steps", args.traceSteps});
        }
        std::vector<char*> cargv, cenv;
        for (auto& a : argv) cargv.push_back(a.data());
        cargv.push_back(nullptr);
        for (auto& e : env) cenv.push_back(e.data());
        cenv.push_back(nullptr);
        // The tasks get the default signal mask back: they install their own stop handling.
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        sigset_t none;
        sigemptyset(&none);
        posix_spawnattr_setsigmask(&attr, &none);
        // Each task in a process group of its own: a Ctrl-C at the terminal reaches the launcher
        // only, which relays it once (the tasks would otherwise get it twice and stop at once).
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
        JobTask& t = tasks[r];
        const int rc = posix_spawn(&t.pid, "/proc/self/exe", nullptr, &attr, cargv.data(), cenv.data());
        posix_spawnattr_destroy(&attr);
        if (rc != 0) {
            t.pid = -1;
            t.done = true;
            stopAll(SIGKILL);
            for (JobTask& o : tasks)
                if (o.pid > 0 && !o.done) ::waitpid(o.pid, nullptr, 0);
            out.failed = true;
            out.failure = "cannot start " + t.name() + ": " + std::strerror(rc);
            return out;
        }
        if (r == 0) {
            // Read now, while it runs: the run's row carries the same start time.
            out.chief = profiler::ProcessIdentity::current();
            out.chief.pid = t.pid;
            out.chief.proc_start = profiler::ProcessIdentity::startTimeOf(t.pid);
        }
    }

    // Wait. A task that fails takes the others down: they are told to stop, then killed if they have
    // not ended within a grace period (one blocked on the failed task gives up within the job's
    // timeout).
    // Once the chief has finished the job, the others have as long to follow (they are told to),
    // then they are ended the same way: a stopped worker must not keep a finished job open. A task
    // found stopped for the job's timeout is ended at once, as one that died.
    const auto grace = std::clamp(timeout, std::chrono::milliseconds(1000), std::chrono::milliseconds(10'000));
    bool relayedStop = false;
    bool killPending = false, termPending = false, chiefSucceeded = false;
    Clock::time_point killAt{}, termAt{};
    int running = static_cast<int>(tasks.size());
    auto succeeded = [](int status) {
        return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kExitStopped);
    };
    auto endTheOthers = [&] {
        stopAll(SIGTERM);
        killAt = Clock::now() + grace;
        killPending = true;
    };
    while (running > 0) {
        const auto now = Clock::now();
        for (JobTask& t : tasks) {
            if (t.done || t.pid <= 0 || t.endedStopped) continue;
            if (!processStopped(t.pid)) {
                t.stoppedSince.reset();
            } else if (!t.stoppedSince) {
                t.stoppedSince = now;
            } else if (now - *t.stoppedSince >= timeout) {
                endStopped(t, now);
            }
        }
        if (signals.requested().load() && !relayedStop) {
            relayedStop = true;
            stopAll(SIGINT);
        }
        if (termPending && Clock::now() >= termAt) {
            termPending = false;
            endTheOthers();
        }
        if (killPending && Clock::now() >= killAt) {
            stopAll(SIGKILL);
            killPending = false;
        }
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, WNOHANG);
        if (pid <= 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        for (JobTask& t : tasks) {
            if (t.pid != pid) continue;
            t.done = true;
            t.status = status;
            --running;
            if (chiefSucceeded) continue;  // the job is over; how the others end does not change that
            if (t.type == "chief" && succeeded(status) && !out.failed) {
                chiefSucceeded = true;
                termPending = running > 0;
                termAt = Clock::now() + grace;
                continue;
            }
            if (!succeeded(status) && !t.essential && !out.failed) {
                if (!args.quiet)
                    std::fprintf(stderr, "parameter_server job: %s %s; its steps go to the other workers\n",
                                 t.label(false).c_str(), t.how().c_str());
                continue;
            }
            if (!succeeded(status) && !out.failed) {
                out.failed = true;
                termPending = false;
                endTheOthers();
            }
        }
    }
    out.stopped = relayedStop;
    if (out.failed) {
        // Every task that failed, the causes first: a task killed from outside or found stopped,
        // then one that exited with an error (often because the first was gone), then the ones
        // ended here. A synchronous job names ranks (chief 0, workers after it); an asynchronous
        // one, tasks.
        for (const int order : {0, 1, 2})
            for (const JobTask& t : tasks) {
                if (succeeded(t.status) || t.precedence() != order) continue;
                const std::string text = t.label(!async) + " " + t.how();
                out.failure += std::string(out.failure.empty() ? "" : "; ") + text;
                if (t.type != "chief") out.othersFailure += std::string(out.othersFailure.empty() ? "" : "; ") + text;
            }
    }
    const int chief = tasks[0].status;
    out.exitCode = WIFEXITED(chief) ? WEXITSTATUS(chief) : kExitRunFailed;
    return out;
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
void recordOnTheChiefsRun(const std::string& db, const Incarnation& r) {
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
    std::string history;
    for (int restarts = 0;; ++restarts) {
        const Incarnation r = runTasks(args, overrides, strategy, workers, servers, timeout, signals, restarts);
        if (!r.failed) {
            if (!args.trace.empty() && strategy == engine::StrategyKind::MultiWorker) return mergeRankTraces(args.trace, workers, r.exitCode);
            return r.exitCode;
        }
        history += std::string(history.empty() ? "" : "\n  ") + (restarts ? "restart " + std::to_string(restarts) + ": " : "") +
                   r.failure;
        const bool canRestart = !r.stopped && restarts < experiment.strategy.max_restarts && !checkpoint.empty() &&
                                std::filesystem::exists(checkpoint);
        if (!canRestart) {
            recordOnTheChiefsRun(args.db, r);
            std::string why;
            if (!r.stopped && checkpoint.empty())
                why = "\n  (no checkpoint to restart from: set train.checkpoint_every_steps)";
            else if (!r.stopped && restarts < experiment.strategy.max_restarts)
                why = "\n  (it failed before its first checkpoint)";
            const std::string after = restarts ? " after " + std::to_string(restarts) + " restart(s)" : "";
            std::fprintf(stderr, "%s job failed%s: %s%s\n", strategyName.c_str(), after.c_str(), history.c_str(), why.c_str());
            return kExitRunFailed;
        }
        std::fprintf(stderr, "%s job: %s; restarting every task from the last checkpoint (%s)\n", strategyName.c_str(),
                     r.failure.c_str(), checkpoint.c_str());
    }
}

}  // namespace trainbench::cli
