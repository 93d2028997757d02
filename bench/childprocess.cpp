#include "bench/childprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "bench/benchutil.h"

extern char** environ;

namespace trainbench::bench {

namespace {

// Seconds all CPUs spent busy since boot (/proc/stat: user nice system idle iowait irq softirq
// steal ...; idle, iowait and steal are not work of this machine's processes).
double machineBusySeconds() {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
    stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
    if (!stat || cpu != "cpu") return 0.0;
    return static_cast<double>(user + nice + system + irq + softirq) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string readBack(std::FILE* f) {
    std::string text;
    std::rewind(f);
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text.append(buffer, n);
    return text;
}

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; }

struct SpawnSetup {
    posix_spawn_file_actions_t actions{};
    posix_spawnattr_t attr{};
    SpawnSetup(int outFd, int errFd) {
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, outFd, 1);
        posix_spawn_file_actions_adddup2(&actions, errFd, 2);
        posix_spawnattr_init(&attr);
        sigset_t defaults;
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGINT);
        sigaddset(&defaults, SIGTERM);
        posix_spawnattr_setsigdefault(&attr, &defaults);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

ChildRun runChild(const std::vector<std::string>& argv) {
    ChildRun run;
    using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
    File out(std::tmpfile(), &std::fclose), err(std::tmpfile(), &std::fclose);
    if (!out || !err) {
        run.exitCode = 127;
        run.err = std::string("cannot create a temporary file: ") + std::strerror(errno);
        return run;
    }
    std::vector<std::string> args = argv;
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);

    SpawnSetup setup(fileno(out.get()), fileno(err.get()));
    const double busy0 = machineBusySeconds();
    const auto t0 = Clock::now();
    pid_t pid = 0;
    if (const int rc = posix_spawn(&pid, cargs[0], &setup.actions, &setup.attr, cargs.data(), environ); rc != 0) {
        run.exitCode = 127;
        run.err = "cannot start " + args[0] + ": " + std::strerror(rc);
        return run;
    }
    int status = 0;
    rusage usage{};
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    run.wallSeconds = secondsSince(t0);
    run.cpuSeconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    if (run.wallSeconds >= 1.0)  // /proc/stat counts in 10 ms ticks: shorter runs give noise
        run.othersCpus = std::max(0.0, (machineBusySeconds() - busy0 - run.cpuSeconds) / run.wallSeconds);
    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = readBack(out.get());
    run.err = readBack(err.get());
    return run;
}

}  // namespace trainbench::bench
