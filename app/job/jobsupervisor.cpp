#include "app/job/jobsupervisor.h"

#include <filesystem>

#include "app/run/exitcodes.h"

namespace trainbench::app {

JobOutcome JobSupervisor::run() {
    JobOutcome out;
    for (int restarts = 0;; ++restarts) {
        IncarnationResult r = JobIncarnation(host_, spec_, stopRequested_, log_, restarts).run();
        out.restarts = restarts;
        if (!r.failed) {
            out.exitCode = r.exitCode;
            out.last = std::move(r);
            return out;
        }
        out.history += std::string(out.history.empty() ? "" : "\n  ") +
                       (restarts ? "restart " + std::to_string(restarts) + ": " : "") + r.failure;
        if (const std::optional<NoRestart> why = whyNoRestart(r, restarts)) {
            out.failed = true;
            out.why = *why;
            out.exitCode = kExitRunFailed;
            out.last = std::move(r);
            return out;
        }
        log_(std::string(engine::strategyKindName(spec_.kind)) + " job: " + r.failure +
             "; restarting every task from the last checkpoint (" + spec_.checkpoint + ")");
    }
}

std::optional<NoRestart> JobSupervisor::whyNoRestart(const IncarnationResult& r, int restarts) const {
    if (r.stopped) return NoRestart::Stopped;
    if (spec_.checkpoint.empty()) return NoRestart::NoCheckpoint;
    if (restarts >= spec_.maxRestarts) return NoRestart::RestartsUsedUp;
    if (!std::filesystem::exists(spec_.checkpoint)) return NoRestart::NoCheckpointYet;
    return std::nullopt;
}

}  // namespace trainbench::app
