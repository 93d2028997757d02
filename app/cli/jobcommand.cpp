// `trainbench-cli run` of a multi_worker experiment: the whole job on this machine. It starts one
// `trainbench-cli worker` process per replica on loopback, each with TF_CONFIG naming its task and
// the job's random token in its environment, relays a stop request to them, and waits. When a task
// dies, the others are stopped (they would only wait for it) and the job fails naming the task.
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/exitcodes.h"
#include "app/cli/stopsignals.h"
#include "app/experiment/experiment.h"
#include "engine/strategy/clusterspec.h"
#include "engine/strategy/storeserver.h"

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

std::string describeStatus(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                    strsignal(WTERMSIG(status)) + ")";
    return "ended (status " + std::to_string(status) + ")";
}

struct Task {
    int rank = 0;
    pid_t pid = -1;
    bool done = false;
    int status = 0;
};

}  // namespace

namespace {

struct Incarnation {
    bool failed = false;
    bool stopped = false;  // the user stopped the job
    int exitCode = 0;      // the chief's
    std::string failure;   // which tasks failed and how, the first to die first
};

// Starts every task of the job once and waits for all of them.
Incarnation runTasks(const RunArgs& args, const std::vector<std::string>& overrides, int workers,
                     const StopSignals& signals, int restarts) {
    Incarnation out;
    engine::ClusterSpec spec;
    std::string token;
    try {
        const std::vector<int> ports = freeLoopbackPorts(workers);
        spec.chief.push_back({"127.0.0.1", ports[0]});
        for (int i = 1; i < workers; ++i) spec.worker.push_back({"127.0.0.1", ports[static_cast<size_t>(i)]});
        token = engine::StoreServer::randomToken();
    } catch (const std::exception& e) {
        out.failed = true;
        out.failure = std::string("cannot start the job: ") + e.what();
        return out;
    }
    if (!args.quiet)
        std::fprintf(stderr, "multi_worker job%s: %d worker process(es) on 127.0.0.1, chief at %s\n",
                     restarts ? (" (restart " + std::to_string(restarts) + ")").c_str() : "", workers,
                     spec.chief[0].text().c_str());

    std::vector<Task> tasks(static_cast<size_t>(workers));
    auto stopAll = [&](int sig) {
        for (Task& t : tasks)
            if (!t.done && t.pid > 0) {
                ::kill(t.pid, sig);
                if (sig == SIGTERM) ::kill(t.pid, SIGCONT);  // a stopped (SIGSTOP) task must wake to end
            }
    };
    for (int r = 0; r < workers; ++r) {
        engine::ClusterSpec mine = spec;
        mine.task_type = r == 0 ? "chief" : "worker";
        mine.task_index = r == 0 ? 0 : r - 1;
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e)
            if (std::strncmp(*e, "TF_CONFIG=", 10) != 0 && std::strncmp(*e, "TRAINBENCH_JOB_", 15) != 0)
                env.emplace_back(*e);
        env.push_back("TF_CONFIG=" + engine::clusterSpecJson(mine));
        env.push_back(std::string(kJobTokenVariable) + "=" + token);
        if (restarts > 0) env.push_back(std::string(kJobRestartsVariable) + "=" + std::to_string(restarts));
        std::vector<std::string> argv = {"trainbench-cli", "worker", args.file, "--db", args.db};
        for (const std::string& o : overrides) {
            argv.push_back("--set");
            argv.push_back(o);
        }
        if (args.quiet || r > 0) argv.push_back("-q");
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
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
        Task& t = tasks[static_cast<size_t>(r)];
        t.rank = r;
        const int rc = posix_spawn(&t.pid, "/proc/self/exe", nullptr, &attr, cargv.data(), cenv.data());
        posix_spawnattr_destroy(&attr);
        if (rc != 0) {
            t.pid = -1;
            t.done = true;
            stopAll(SIGKILL);
            for (Task& o : tasks)
                if (o.pid > 0 && !o.done) ::waitpid(o.pid, nullptr, 0);
            out.failed = true;
            out.failure = "cannot start worker " + std::to_string(r) + ": " + std::strerror(rc);
            return out;
        }
    }

    // Wait. A task that fails takes the others down: they are told to stop, then killed if they do
    // not within a grace period (a stopped peer would keep them waiting until the timeout).
    bool relayedStop = false;
    bool killPending = false;
    Clock::time_point killAt{};
    int running = workers;
    auto succeeded = [](int status) {
        return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kExitStopped);
    };
    while (running > 0) {
        if (signals.requested().load() && !relayedStop) {
            relayedStop = true;
            stopAll(SIGINT);
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
        for (Task& t : tasks) {
            if (t.pid != pid) continue;
            t.done = true;
            t.status = status;
            --running;
            if (!succeeded(status) && !out.failed) {
                out.failed = true;
                stopAll(SIGTERM);
                killAt = Clock::now() + std::chrono::seconds(10);
                killPending = true;
            }
        }
    }
    out.stopped = relayedStop;
    if (out.failed) {
        // Every task that failed, the ones that died first: a killed task is the cause, the others
        // failed because it was gone (or were stopped here).
        for (const bool signaled : {true, false})
            for (const Task& t : tasks) {
                if (succeeded(t.status) || WIFSIGNALED(t.status) != signaled) continue;
                out.failure += std::string(out.failure.empty() ? "" : "; ") +
                               (t.rank == 0 ? "the chief (rank 0, pid " : "worker rank " + std::to_string(t.rank) + " (pid ") +
                               std::to_string(t.pid) + ") " + describeStatus(t.status);
            }
    }
    const int chief = tasks[0].status;
    out.exitCode = WIFEXITED(chief) ? WEXITSTATUS(chief) : kExitRunFailed;
    return out;
}

}  // namespace

int launchLocalJob(const RunArgs& args, const app::Experiment& experiment, const StopSignals& signals) {
    const int workers = experiment.strategy.replicas;
    // Checkpoints go to a file every incarnation of the job knows: the one the experiment names, or
    // one per job next to the run store.
    std::vector<std::string> overrides = args.overrides;
    std::string checkpoint = experiment.train.checkpoint_path;
    if (experiment.train.checkpoint_every_steps > 0 && checkpoint.empty()) {
        const std::string id = engine::StoreServer::randomToken().substr(0, 12);
        checkpoint = std::filesystem::absolute(std::filesystem::path(args.db).parent_path() / "checkpoints" /
                                               ("job-" + id + ".ckpt"))
                         .string();
        overrides.push_back("train.checkpoint_path=" + checkpoint);
    }
    std::string history;
    for (int restarts = 0;; ++restarts) {
        const Incarnation r = runTasks(args, overrides, workers, signals, restarts);
        if (!r.failed) return r.exitCode;
        history += std::string(history.empty() ? "" : "\n  ") + (restarts ? "restart " + std::to_string(restarts) + ": " : "") +
                   r.failure;
        const bool canRestart = !r.stopped && restarts < experiment.strategy.max_restarts && !checkpoint.empty() &&
                                std::filesystem::exists(checkpoint);
        if (!canRestart) {
            std::string why;
            if (!r.stopped && checkpoint.empty())
                why = "\n  (no checkpoint to restart from: set train.checkpoint_every_steps)";
            else if (!r.stopped && restarts < experiment.strategy.max_restarts)
                why = "\n  (it failed before its first checkpoint)";
            const std::string after = restarts ? " after " + std::to_string(restarts) + " restart(s)" : "";
            std::fprintf(stderr, "multi_worker job failed%s: %s%s\n", after.c_str(), history.c_str(), why.c_str());
            return kExitRunFailed;
        }
        std::fprintf(stderr, "multi_worker job: %s; restarting every task from the last checkpoint (%s)\n",
                     r.failure.c_str(), checkpoint.c_str());
    }
}

}  // namespace trainbench::cli
