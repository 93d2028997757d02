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

int launchLocalJob(const RunArgs& args, const app::Experiment& experiment, const StopSignals& signals) {
    const int workers = experiment.strategy.replicas;
    engine::ClusterSpec spec;
    std::string token;
    try {
        const std::vector<int> ports = freeLoopbackPorts(workers);
        spec.chief.push_back({"127.0.0.1", ports[0]});
        for (int i = 1; i < workers; ++i) spec.worker.push_back({"127.0.0.1", ports[static_cast<size_t>(i)]});
        token = engine::StoreServer::randomToken();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cannot start the job: %s\n", e.what());
        return kExitRunFailed;
    }
    if (!args.quiet)
        std::fprintf(stderr, "multi_worker job: %d worker process(es) on 127.0.0.1, chief at %s\n", workers,
                     spec.chief[0].text().c_str());

    std::vector<Task> tasks(static_cast<size_t>(workers));
    auto stopAll = [&](int sig) {
        for (Task& t : tasks)
            if (!t.done && t.pid > 0) ::kill(t.pid, sig);
    };
    for (int r = 0; r < workers; ++r) {
        engine::ClusterSpec mine = spec;
        mine.task_type = r == 0 ? "chief" : "worker";
        mine.task_index = r == 0 ? 0 : r - 1;
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e)
            if (std::strncmp(*e, "TF_CONFIG=", 10) != 0 && std::strncmp(*e, "TRAINBENCH_JOB_TOKEN=", 21) != 0)
                env.emplace_back(*e);
        env.push_back("TF_CONFIG=" + engine::clusterSpecJson(mine));
        env.push_back(std::string(kJobTokenVariable) + "=" + token);
        std::vector<std::string> argv = {"trainbench-cli", "worker", args.file, "--db", args.db};
        for (const std::string& o : args.overrides) {
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
            std::fprintf(stderr, "cannot start worker %d: %s\n", r, std::strerror(rc));
            t.pid = -1;
            t.done = true;
            stopAll(SIGKILL);
            for (Task& o : tasks)
                if (o.pid > 0 && !o.done) ::waitpid(o.pid, nullptr, 0);
            return kExitRunFailed;
        }
    }

    // Wait. A task that fails takes the job down: the others are told to stop, then killed if they
    // do not within a grace period (a stopped peer would keep them waiting until the timeout).
    bool relayedStop = false;
    bool failed = false;
    bool killPending = false;
    Clock::time_point killAt{};
    int running = workers;
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
            const bool ok = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kExitStopped);
            if (!ok && !failed) {
                failed = true;
                stopAll(SIGTERM);
                killAt = Clock::now() + std::chrono::seconds(10);
                killPending = true;
            }
        }
    }
    if (failed) {
        // Every task that failed, the ones that died first: a killed task is the cause, the others
        // failed because it was gone (or were stopped here).
        std::string what;
        for (const bool signaled : {true, false})
            for (const Task& t : tasks) {
                const bool ok = WIFEXITED(t.status) && (WEXITSTATUS(t.status) == 0 || WEXITSTATUS(t.status) == kExitStopped);
                if (ok || WIFSIGNALED(t.status) != signaled) continue;
                what += std::string(what.empty() ? "" : "; ") +
                        (t.rank == 0 ? "the chief (rank 0, pid " : "worker rank " + std::to_string(t.rank) + " (pid ") +
                        std::to_string(t.pid) + ") " + describeStatus(t.status);
            }
        std::fprintf(stderr, "multi_worker job failed: %s\n", what.c_str());
        return kExitRunFailed;
    }
    const int chief = tasks[0].status;
    return WIFEXITED(chief) ? WEXITSTATUS(chief) : kExitRunFailed;
}

}  // namespace trainbench::cli
