#pragma once
// The tasks of a job as processes on this machine: each spawned with the command its caller builds
// (trainbench-cli builds `trainbench-cli worker ...` with TF_CONFIG and the token in the environment),
// in a process group of its own and with the default signal mask; ended ones reaped with waitpid.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/job/taskhost.h"

namespace trainbench::app {

struct TaskCommand {
    std::string program;            // the executable's path
    std::vector<std::string> argv;  // argv[0] included
    std::vector<std::string> env;   // the whole environment, NAME=value
};

// True when the process is stopped (state T or t in /proc/<pid>/stat: SIGSTOP, SIGTSTP, a debugger).
bool processStopped(pid_t pid);
// One look for a child of this process that ended (waitpid of any child, not blocking); when none
// had, a sleep until `deadline`. What the hosts that spawn their tasks as children use.
std::optional<TaskExit> waitForAnyChild(TaskHost::Clock::time_point deadline);

class ProcessTaskHost final : public TaskHost {
public:
    using CommandFor = std::function<TaskCommand(const TaskStart&)>;
    explicit ProcessTaskHost(CommandFor commandFor) : commandFor_(std::move(commandFor)) {}

    pid_t start(const TaskStart& start) override;
    profiler::ProcessIdentity identity(pid_t pid) override;
    void signal(pid_t pid, int sig) override;
    bool stopped(pid_t pid) override;
    // One look (waitpid of any child, not blocking); when nothing ended, a sleep until `deadline`.
    std::optional<TaskExit> waitForExit(Clock::time_point deadline) override;
    void reap(pid_t pid) override;
    Clock::time_point now() override { return Clock::now(); }

private:
    CommandFor commandFor_;
};

}  // namespace trainbench::app
