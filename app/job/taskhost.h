#pragma once
// Where the tasks of a job run, as the job supervisor sees them: started, watched for their end or
// for being stopped, signalled, on a clock. ProcessTaskHost runs them as processes on this machine;
// the unit tests drive the supervisor with fake tasks in virtual time (tests/app/faketaskhost.h).
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "engine/strategy/clusterspec.h"
#include "profiler/store/processidentity.h"

namespace trainbench::app {

struct JobTask;

// What a task is told when it starts: who it is in the job and how to join it.
struct TaskStart {
    const JobTask& task;
    size_t rank = 0;           // its place among the job's tasks: 0 the chief, then workers, then servers
    engine::ClusterSpec spec;  // the job's, with task_type and task_index naming this task
    std::string token;         // the job's random token (the tasks refuse peers without it)
    int restarts = 0;          // how often the job was restarted before this incarnation
};

// A task that ended: its id and its wait status (waitpid's encoding, also for fakes).
struct TaskExit {
    pid_t pid = -1;
    int status = 0;
};

class TaskHost {
public:
    using Clock = std::chrono::steady_clock;
    virtual ~TaskHost() = default;

    // Starts the task; its id (> 0). Throws std::runtime_error saying why it cannot.
    virtual pid_t start(const TaskStart& start) = 0;
    // Who the task is, for the run store (the chief's run records the job's failure): read while it runs.
    virtual profiler::ProcessIdentity identity(pid_t pid) = 0;
    // SIGINT (stop after the step), SIGTERM (stop), SIGKILL (ends it, even a stopped one).
    virtual void signal(pid_t pid, int sig) = 0;
    // Whether it is stopped (SIGSTOP, a debugger): it makes no progress and acts on nothing but SIGKILL.
    virtual bool stopped(pid_t pid) = 0;
    // A task that has ended, looking until `deadline`; nullopt when none had by then.
    virtual std::optional<TaskExit> waitForExit(Clock::time_point deadline) = 0;
    // Waits for the task to end (it was sent SIGKILL).
    virtual void reap(pid_t pid) = 0;
    virtual Clock::time_point now() = 0;
    // What the host learnt of how the task ended beyond its status, for the job's failure (mpirun's
    // words on which rank failed); empty when nothing.
    virtual std::string detail(pid_t pid) { (void)pid; return {}; }
};

}  // namespace trainbench::app
