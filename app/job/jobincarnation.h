#pragma once
// One incarnation of a job: every task started once on loopback, then watched until all have ended.
// When a task the job cannot do without dies (any task of a synchronous job; the chief or a
// parameter server of an asynchronous one), the others are stopped, then killed after a grace
// period. A parameter_server job carries on without a dead worker: its coordinator gives the
// worker's step to another. A task found stopped (SIGSTOP, a debugger) for strategy.timeout_s is
// ended as if it had died. A stop request (Ctrl-C) is relayed to every task but the parameter servers.
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "app/job/jobspec.h"
#include "app/job/jobtask.h"
#include "app/job/taskhost.h"
#include "engine/strategy/clusterspec.h"
#include "profiler/store/processidentity.h"

namespace trainbench::app {

struct IncarnationResult {
    bool failed = false;
    bool stopped = false;  // the user stopped the job
    int exitCode = 0;      // the chief's
    std::string failure;   // which tasks failed and how, the first to die first
    std::string othersFailure;        // the same without the chief: what the chief could not know
    profiler::ProcessIdentity chief;  // whose run the job's failure is recorded on
};

class JobIncarnation {
public:
    // `restarts`: how often the job was restarted before this incarnation.
    JobIncarnation(TaskHost& host, const JobSpec& spec, const std::atomic<bool>& stopRequested, const JobLog& log,
                   int restarts);
    JobIncarnation(const JobIncarnation&) = delete;
    JobIncarnation& operator=(const JobIncarnation&) = delete;

    IncarnationResult run();

private:
    using Clock = TaskHost::Clock;

    bool startAll(const engine::ClusterSpec& cluster, const std::string& token);
    void watch();
    void ended(JobTask& t, int status);
    void endStopped(JobTask& t, Clock::time_point now);
    void stopAll(int sig);
    void endTheOthers();
    void describeFailure();

    TaskHost& host_;
    const JobSpec& spec_;
    const std::atomic<bool>& stopRequested_;
    const JobLog& log_;
    const int restarts_;
    const std::chrono::milliseconds grace_;
    std::vector<JobTask> tasks_;
    IncarnationResult out_;
    int running_ = 0;
    bool relayedStop_ = false, killPending_ = false, termPending_ = false, chiefSucceeded_ = false;
    Clock::time_point killAt_{}, termAt_{};
};

}  // namespace trainbench::app
