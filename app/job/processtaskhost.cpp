#include "app/job/processtaskhost.h"

#include "app/job/spawnprocess.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace trainbench::app {

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

pid_t ProcessTaskHost::start(const TaskStart& start) {
    TaskCommand command = commandFor_(start);
    return spawnInOwnGroup(command.program, std::move(command.argv), &command.env, nullptr);
}

profiler::ProcessIdentity ProcessTaskHost::identity(pid_t pid) {
    profiler::ProcessIdentity id = profiler::ProcessIdentity::current();
    id.pid = pid;
    id.proc_start = profiler::ProcessIdentity::startTimeOf(pid);
    return id;
}

void ProcessTaskHost::signal(pid_t pid, int sig) { ::kill(pid, sig); }

bool ProcessTaskHost::stopped(pid_t pid) { return processStopped(pid); }

std::optional<TaskExit> waitForAnyChild(TaskHost::Clock::time_point deadline) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) return TaskExit{pid, status};
    std::this_thread::sleep_until(deadline);
    return std::nullopt;
}

std::optional<TaskExit> ProcessTaskHost::waitForExit(Clock::time_point deadline) { return waitForAnyChild(deadline); }

void ProcessTaskHost::reap(pid_t pid) { ::waitpid(pid, nullptr, 0); }

}  // namespace trainbench::app
