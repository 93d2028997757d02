#include "app/job/processtaskhost.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace trainbench::app {

namespace {

// True when the process is stopped (state T or t in /proc/<pid>/stat: SIGSTOP, SIGTSTP, a debugger).
bool processStopped(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line)) return false;
    // pid (comm) state ...: the command may hold spaces and parentheses, the state follows the last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return false;
    const char state = line[close + 2];
    return state == 'T' || state == 't';
}

}  // namespace

pid_t ProcessTaskHost::start(const TaskStart& start) {
    TaskCommand command = commandFor_(start);
    std::vector<char*> cargv, cenv;
    for (auto& a : command.argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : command.env) cenv.push_back(e.data());
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
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, command.program.c_str(), nullptr, &attr, cargv.data(), cenv.data());
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw std::runtime_error(std::strerror(rc));
    return pid;
}

profiler::ProcessIdentity ProcessTaskHost::identity(pid_t pid) {
    profiler::ProcessIdentity id = profiler::ProcessIdentity::current();
    id.pid = pid;
    id.proc_start = profiler::ProcessIdentity::startTimeOf(pid);
    return id;
}

void ProcessTaskHost::signal(pid_t pid, int sig) { ::kill(pid, sig); }

bool ProcessTaskHost::stopped(pid_t pid) { return processStopped(pid); }

std::optional<TaskExit> ProcessTaskHost::waitForExit(Clock::time_point deadline) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) return TaskExit{pid, status};
    std::this_thread::sleep_until(deadline);
    return std::nullopt;
}

void ProcessTaskHost::reap(pid_t pid) { ::waitpid(pid, nullptr, 0); }

}  // namespace trainbench::app
