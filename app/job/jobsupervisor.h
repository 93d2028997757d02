#pragma once
// Runs a multi_worker or parameter_server job on this machine to its end: an incarnation of every
// task (jobincarnation.h), and after a failure another, from the last checkpoint, while the restart
// policy allows it: the user did not stop the job, restarts are left (strategy.max_restarts), and
// the checkpoint file is there.
#include <atomic>
#include <optional>
#include <string>
#include <utility>

#include "app/job/jobincarnation.h"
#include "app/job/jobspec.h"
#include "app/job/taskhost.h"

namespace trainbench::app {

// Why a failed job was not restarted (again).
enum class NoRestart {
    NotNeeded,        // the job did not fail
    Stopped,          // the user stopped it
    NoCheckpoint,     // it has no checkpoint file to restart from (train.checkpoint_every_steps unset)
    NoCheckpointYet,  // it failed before its first checkpoint
    RestartsUsedUp,   // strategy.max_restarts restarts were made
};

struct JobOutcome {
    bool failed = false;
    int exitCode = 0;        // the chief's when the job did not fail; kExitRunFailed when it did
    int restarts = 0;        // incarnations after the first
    std::string history;     // every incarnation's failure, one a line, "restart N: " before all but the first
    NoRestart why = NoRestart::NotNeeded;
    IncarnationResult last;  // the last incarnation
};

class JobSupervisor {
public:
    JobSupervisor(TaskHost& host, JobSpec spec, const std::atomic<bool>& stopRequested, JobLog log)
        : host_(host), spec_(std::move(spec)), stopRequested_(stopRequested), log_(std::move(log)) {}

    JobOutcome run();

private:
    // Why the failed incarnation `r` is the job's last; nullopt: restart it.
    std::optional<NoRestart> whyNoRestart(const IncarnationResult& r, int restarts) const;

    TaskHost& host_;
    const JobSpec spec_;
    const std::atomic<bool>& stopRequested_;
    const JobLog log_;
};

}  // namespace trainbench::app
