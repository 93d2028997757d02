#include "app/job/jobincarnation.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <exception>
#include <optional>

#include "app/job/loopbackports.h"
#include "app/run/exitcodes.h"
#include "engine/rendezvous/rendezvousserver.h"

namespace trainbench::app {

namespace {

// How often the tasks are looked at: a stop is seen, and a stopped task timed, to this.
constexpr std::chrono::milliseconds kLookEvery{50};

bool succeeded(int status) {
    return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kExitStopped);
}

}  // namespace

JobIncarnation::JobIncarnation(TaskHost& host, const JobSpec& spec, const std::atomic<bool>& stopRequested,
                               const JobLog& log, int restarts)
    : host_(host),
      spec_(spec),
      stopRequested_(stopRequested),
      log_(log),
      restarts_(restarts),
      grace_(std::clamp(spec.timeout, std::chrono::milliseconds(1000), std::chrono::milliseconds(10'000))) {}

IncarnationResult JobIncarnation::run() {
    const bool async = spec_.asynchronous();
    tasks_.push_back({"chief", 0});
    const int workers = spec_.mpiRanks > 0 ? 1 : spec_.workers;  // an MPI job's one task is mpirun
    for (int i = 0; i < (async ? workers : workers - 1); ++i) tasks_.push_back({"worker", i, "", !async});
    for (int i = 0; i < (async ? spec_.servers : 0); ++i) tasks_.push_back({"ps", i});
    engine::ClusterSpec cluster;
    std::string token;
    try {
        const std::vector<int> ports = freeLoopbackPorts(static_cast<int>(tasks_.size()));
        for (size_t i = 0; i < tasks_.size(); ++i) {
            const engine::HostPort hp{"127.0.0.1", ports[i]};
            (tasks_[i].type == "chief" ? cluster.chief : tasks_[i].type == "ps" ? cluster.ps : cluster.worker).push_back(hp);
            tasks_[i].address = hp.text();
        }
        token = engine::RendezvousServer::randomToken();
    } catch (const std::exception& e) {
        out_.failed = true;
        out_.failure = std::string("cannot start the job: ") + e.what();
        return out_;
    }
    if (!spec_.quiet) {
        const std::string again = restarts_ ? " (restart " + std::to_string(restarts_) + ")" : "";
        const std::string chief = cluster.chief[0].text();
        if (spec_.mpiRanks > 0)
            log_("multi_worker job" + again + ": " + std::to_string(spec_.mpiRanks) +
                 " worker process(es) under mpirun (Open MPI), on this machine");
        else if (async)
            log_("parameter_server job" + again + ": " + std::to_string(spec_.workers) + " worker(s) and " +
                 std::to_string(spec_.servers) + " parameter server(s) on 127.0.0.1, chief at " + chief);
        else
            log_("multi_worker job" + again + ": " + std::to_string(spec_.workers) +
                 " worker process(es) on 127.0.0.1, chief at " + chief);
    }
    if (!startAll(cluster, token)) return out_;
    watch();
    out_.stopped = relayedStop_;
    if (out_.failed) describeFailure();
    const int chief = tasks_[0].status;
    out_.exitCode = WIFEXITED(chief) ? WEXITSTATUS(chief) : kExitRunFailed;
    return out_;
}

bool JobIncarnation::startAll(const engine::ClusterSpec& cluster, const std::string& token) {
    for (size_t r = 0; r < tasks_.size(); ++r) {
        JobTask& t = tasks_[r];
        TaskStart start{t, r, cluster, token, restarts_};
        start.spec.task_type = t.type;
        start.spec.task_index = t.index;
        try {
            t.pid = host_.start(start);
        } catch (const std::exception& e) {
            t.pid = -1;
            t.done = true;
            stopAll(SIGKILL);
            for (JobTask& o : tasks_)
                if (o.pid > 0 && !o.done) host_.reap(o.pid);
            out_.failed = true;
            out_.failure = "cannot start " + t.name() + ": " + e.what();
            return false;
        }
        // Read now, while it runs: the run's row carries the same start time.
        if (r == 0) out_.chief = host_.identity(t.pid);
    }
    return true;
}

// A stopped task (SIGSTOP, a debugger) makes no progress, however long the others wait for it:
// it is ended (SIGKILL works on a stopped process) and named as the cause.
void JobIncarnation::endStopped(JobTask& t, Clock::time_point now) {
    host_.signal(t.pid, SIGKILL);
    t.endedStopped = std::chrono::duration_cast<std::chrono::milliseconds>(now - t.stoppedSince.value_or(now));
}

// `sig` to every task still running, except that a stopped one is ended (it would not act on
// it), and that the chief is not asked to stop when the job failed (SIGTERM): it records the
// run, and a stop request would record a failed job as stopped. It fails on its own once its
// peers are gone, or is ended with the others after the grace period.
void JobIncarnation::stopAll(int sig) {
    for (JobTask& t : tasks_) {
        if (t.done || t.pid <= 0 || t.endedStopped) continue;
        if (sig != SIGINT && host_.stopped(t.pid)) {
            endStopped(t, host_.now());
            continue;
        }
        if (sig == SIGTERM && t.type == "chief") continue;
        // A parameter server is not asked to stop: the chief, stopping after its step, sends it
        // Shutdown once the workers are told. Ended by the stop request itself, it closed the
        // workers' connections mid-step and the job failed instead of stopping.
        if (sig == SIGINT && t.type == "ps") continue;
        host_.signal(t.pid, sig);
        if (sig == SIGKILL) t.endedHere = true;
    }
}

void JobIncarnation::endTheOthers() {
    stopAll(SIGTERM);
    killAt_ = host_.now() + grace_;
    killPending_ = true;
}

// Wait. A task that fails takes the others down: they are told to stop, then killed if they have
// not ended within a grace period (one blocked on the failed task gives up within the job's
// timeout).
// Once the chief has finished the job, the others have as long to follow (they are told to),
// then they are ended the same way: a stopped worker must not keep a finished job open. A task
// found stopped for the job's timeout is ended at once, as one that died.
void JobIncarnation::watch() {
    running_ = static_cast<int>(tasks_.size());
    while (running_ > 0) {
        const auto now = host_.now();
        for (JobTask& t : tasks_) {
            if (t.done || t.pid <= 0 || t.endedStopped) continue;
            if (!host_.stopped(t.pid)) {
                t.stoppedSince.reset();
            } else if (!t.stoppedSince) {
                t.stoppedSince = now;
            } else if (now - *t.stoppedSince >= spec_.timeout) {
                endStopped(t, now);
            }
        }
        if (stopRequested_.load() && !relayedStop_) {
            relayedStop_ = true;
            stopAll(SIGINT);
        }
        if (termPending_ && host_.now() >= termAt_) {
            termPending_ = false;
            endTheOthers();
        }
        if (killPending_ && host_.now() >= killAt_) {
            stopAll(SIGKILL);
            killPending_ = false;
        }
        const std::optional<TaskExit> exit = host_.waitForExit(host_.now() + kLookEvery);
        if (!exit) continue;
        for (JobTask& t : tasks_)
            if (t.pid == exit->pid) ended(t, exit->status);
    }
}

void JobIncarnation::ended(JobTask& t, int status) {
    t.done = true;
    t.status = status;
    --running_;
    if (chiefSucceeded_) return;  // the job is over; how the others end does not change that
    if (t.type == "chief" && succeeded(status) && !out_.failed) {
        chiefSucceeded_ = true;
        termPending_ = running_ > 0;
        termAt_ = host_.now() + grace_;
        return;
    }
    if (!succeeded(status) && !t.essential && !out_.failed) {
        if (!spec_.quiet) log_("parameter_server job: " + t.label(false) + " " + t.how() + "; its steps go to the other workers");
        return;
    }
    if (!succeeded(status) && !out_.failed) {
        out_.failed = true;
        termPending_ = false;
        endTheOthers();
    }
}

// Every task that failed, the causes first: a task killed from outside or found stopped, then one
// that exited with an error (often because the first was gone), then the ones ended here. A
// synchronous job names ranks (chief 0, workers after it); an asynchronous one, tasks.
void JobIncarnation::describeFailure() {
    for (const int order : {0, 1, 2})
        for (const JobTask& t : tasks_) {
            if (succeeded(t.status) || t.precedence() != order) continue;
            std::string text = spec_.mpiRanks > 0 ? "mpirun (pid " + std::to_string(t.pid) + ", " +
                                                        std::to_string(spec_.mpiRanks) + " ranks) " + t.how()
                                                  : t.label(!spec_.asynchronous()) + " " + t.how();
            if (const std::string detail = host_.detail(t.pid); !detail.empty()) text += ": " + detail;
            out_.failure += std::string(out_.failure.empty() ? "" : "; ") + text;
            if (t.type != "chief") out_.othersFailure += std::string(out_.othersFailure.empty() ? "" : "; ") + text;
        }
}

}  // namespace trainbench::app
