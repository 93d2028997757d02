#pragma once
// One task of a job the job supervisor started (jobincarnation.cpp): its id, its address, and how it
// ended, in the words of the job's failure message.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

namespace trainbench::app {

struct JobTask {
    std::string type;       // chief, worker, ps
    int index = 0;
    std::string address{};  // host:port, from the job's cluster spec
    bool essential = true;  // the job fails without it
    pid_t pid = -1;         // the task host's id for it (a process id)
    bool done = false;
    int status = 0;          // waitpid's
    bool endedHere = false;  // killed by the launcher: it had not ended within the grace period
    // Found stopped (SIGSTOP, a debugger): since when, as the launcher saw it; then ended for it.
    std::optional<std::chrono::steady_clock::time_point> stoppedSince{};
    std::optional<std::chrono::milliseconds> endedStopped{};  // how long it had been stopped then

    std::string name() const;  // "the chief", "worker 1", "parameter server 0"
    // Who, in the job's failure: "parameter server 0 (pid 12, 127.0.0.1:4002)"; a synchronous job's
    // tasks by rank: "the chief (rank 0, pid 11, 127.0.0.1:4000)", "worker rank 1 (pid 13, ...)".
    std::string label(bool synchronous) const;
    std::string how() const;  // "was killed by signal 9 (Killed)", "exited with status 1", ...
    // Whether it failed the launcher would call a cause rather than a consequence: killed from
    // outside or ended for being stopped (0), exited with an error (1), ended here (2).
    int precedence() const;
};

// "exited with status 1", "was killed by signal 9 (Killed)".
std::string describeStatus(int status);

}  // namespace trainbench::app
