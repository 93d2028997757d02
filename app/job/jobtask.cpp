#include "app/job/jobtask.h"

#include <signal.h>
#include <sys/wait.h>

#include <cstring>

#include "engine/util/durationtext.h"

namespace trainbench::app {

std::string describeStatus(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                    strsignal(WTERMSIG(status)) + ")";
    return "ended (status " + std::to_string(status) + ")";
}

std::string JobTask::name() const {
    if (type == "chief") return "the chief";
    return (type == "ps" ? "parameter server " : "worker ") + std::to_string(index);
}

std::string JobTask::label(bool synchronous) const {
    const std::string where = "pid " + std::to_string(pid) + ", " + address + ")";
    if (!synchronous) return name() + " (" + where;
    return type == "chief" ? "the chief (rank 0, " + where : "worker rank " + std::to_string(index + 1) + " (" + where;
}

std::string JobTask::how() const {
    if (endedStopped) {
        // Rounded to a tenth of a second: the launcher looks every 50 ms.
        const auto tenths = std::chrono::milliseconds(endedStopped->count() / 100 * 100);
        return "was stopped (SIGSTOP or a debugger)" +
               (tenths.count() > 0 ? " for " + engine::secondsText(tenths) : std::string(" when the job failed")) +
               ", making no progress, and was ended by the launcher (SIGKILL)";
    }
    if (endedHere && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        return "did not end in time and was ended by the launcher (SIGKILL)";
    return describeStatus(status);
}

int JobTask::precedence() const {
    if (endedStopped) return 0;
    return endedHere ? 2 : WIFSIGNALED(status) ? 0 : 1;
}

}  // namespace trainbench::app
