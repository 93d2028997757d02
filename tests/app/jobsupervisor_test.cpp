// The job supervisor (app/job/) with fake tasks on a virtual clock: which failures end a job and
// which restart it, who is told to stop and when, what is killed after which deadline, and how the
// failure names the tasks. The same supervisor runs real `trainbench-cli worker` processes in
// tests/integration (CliMultiWorker, CliParameterServer).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/job/jobsupervisor.h"
#include "app/run/exitcodes.h"
#include "tests/app/faketaskhost.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::exited;
using testing::FakeTask;
using testing::FakeTaskHost;
using testing::killedBy;
using std::chrono::milliseconds;

struct JobRun {
    JobOutcome outcome;
    std::vector<std::string> log;

    bool said(const std::string& text) const {
        return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
    }
};

JobRun runJob(FakeTaskHost& host, const JobSpec& spec) {
    JobRun r;
    JobSupervisor supervisor(host, spec, host.stopRequested, [&r](const std::string& line) { r.log.push_back(line); });
    r.outcome = supervisor.run();
    return r;
}

JobSpec multiWorker(int workers, milliseconds timeout = 5s) {
    JobSpec s;
    s.kind = engine::StrategyKind::MultiWorker;
    s.workers = workers;
    s.timeout = timeout;
    return s;
}

JobSpec parameterServer(int workers, int servers, milliseconds timeout = 5s) {
    JobSpec s = multiWorker(workers, timeout);
    s.kind = engine::StrategyKind::ParameterServer;
    s.servers = servers;
    return s;
}

FakeTask runsUntilSignalled() {
    FakeTask t;
    t.endsAfter.reset();
    return t;
}

FakeTask endsAfter(milliseconds after, int status) {
    FakeTask t;
    t.endsAfter = after;
    t.endStatus = status;
    return t;
}

// Worker rank 1 exits with status 1 after a second; the others run until told to stop.
FakeTask rankOneFailsAfterASecond(const TaskStart& s) {
    return s.rank == 1 ? endsAfter(1s, exited(1)) : runsUntilSignalled();
}

JobSpec restartable(JobSpec spec, int maxRestarts, const std::string& checkpoint) {
    spec.maxRestarts = maxRestarts;
    spec.checkpoint = checkpoint;
    return spec;
}

// "worker rank 2 (pid 1002, 127.0.0.1:4002)": how a failure names a task.
std::string labelOf(const testing::FakeTaskRecord& t, const std::string& who) {
    return who + " (pid " + std::to_string(t.pid) + ", " + t.spec.self().text() + ")";
}

// A checkpoint file the job may restart from, removed at the end.
class CheckpointFile {
public:
    CheckpointFile()
        : path_(fs::temp_directory_path() / ("trainbench-jobsupervisor-" + std::to_string(::getpid()) + ".ckpt")) {
        std::ofstream(path_) << "checkpoint";
    }
    ~CheckpointFile() { fs::remove(path_); }
    std::string path() const { return path_.string(); }

private:
    fs::path path_;
};

TEST(JobSupervisor, AJobWhoseTasksAllFinishSucceedsAndEveryTaskIsToldWhoItIs) {
    FakeTaskHost host;
    const JobRun r = runJob(host, multiWorker(3));
    EXPECT_FALSE(r.outcome.failed);
    EXPECT_EQ(r.outcome.exitCode, 0);
    EXPECT_EQ(r.outcome.restarts, 0);
    EXPECT_EQ(r.outcome.why, NoRestart::NotNeeded);
    ASSERT_EQ(host.tasks().size(), 3u);
    const std::string chief = host.task("the chief").spec.self().text();
    EXPECT_TRUE(r.said("multi_worker job: 3 worker process(es) on 127.0.0.1, chief at " + chief)) << r.log.at(0);
    for (size_t i = 0; i < host.tasks().size(); ++i) {
        const testing::FakeTaskRecord& t = host.tasks()[i];
        EXPECT_EQ(t.rank, i);
        EXPECT_EQ(t.spec.rank(), static_cast<int>(i)) << t.name;
        EXPECT_EQ(t.spec.trainers(), 3);
        EXPECT_FALSE(t.token.empty());
        EXPECT_EQ(t.token, host.tasks()[0].token);
        EXPECT_TRUE(t.signals.empty()) << t.name << " was signalled";
    }
    EXPECT_EQ(r.outcome.last.chief.pid, host.task("the chief").pid);
}

TEST(JobSupervisor, AParameterServerJobIsAChiefWorkersAndServers) {
    FakeTaskHost host;
    const JobRun r = runJob(host, parameterServer(2, 1));
    EXPECT_FALSE(r.outcome.failed);
    ASSERT_EQ(host.tasks().size(), 4u);
    EXPECT_EQ(host.tasks()[1].name, "worker 0");
    EXPECT_EQ(host.tasks()[2].name, "worker 1");
    EXPECT_EQ(host.tasks()[3].name, "parameter server 0");
    EXPECT_EQ(host.tasks()[3].spec.task_type, "ps");
    EXPECT_EQ(host.tasks()[3].spec.ps.size(), 1u);
    EXPECT_TRUE(r.said("parameter_server job: 2 worker(s) and 1 parameter server(s) on 127.0.0.1, chief at "));
}

TEST(JobSupervisor, AFailingWorkerEndsASynchronousJobNamedFirstAndTheChiefIsKilledNotStopped) {
    FakeTaskHost host([](const TaskStart& s) {
        return s.rank == 2 ? endsAfter(2s, exited(1)) : runsUntilSignalled();
    });
    const JobRun r = runJob(host, multiWorker(3, 3s));  // the grace period: the timeout, 1 s to 10 s
    const auto& chief = host.task("the chief");
    const auto& worker0 = host.task("worker 0");
    const auto& worker1 = host.task("worker 1");
    ASSERT_TRUE(r.outcome.failed);
    EXPECT_EQ(r.outcome.exitCode, kExitRunFailed);
    EXPECT_EQ(r.outcome.why, NoRestart::NoCheckpoint);
    const std::string cause = labelOf(worker1, "worker rank 2") + " exited with status 1";
    const std::string chiefKilled =
        "the chief (rank 0, pid " + std::to_string(chief.pid) + ", " + chief.spec.self().text() +
        ") did not end in time and was ended by the launcher (SIGKILL)";
    EXPECT_EQ(r.outcome.last.failure, cause + "; " + chiefKilled);
    EXPECT_EQ(r.outcome.last.othersFailure, cause);
    EXPECT_EQ(r.outcome.history, r.outcome.last.failure);
    // The other worker is told to stop at once (and does: exit 130 is no failure); the chief is not
    // asked to stop (it would record a failed job as stopped) but killed after the grace period.
    ASSERT_EQ(worker0.signalsOnly(), std::vector<int>{SIGTERM});
    EXPECT_GE(worker0.signals[0].first, 2s);
    EXPECT_LT(worker0.signals[0].first, 2s + 100ms);
    ASSERT_EQ(chief.signalsOnly(), std::vector<int>{SIGKILL});
    EXPECT_GE(chief.signals[0].first, worker0.signals[0].first + 3s);
    EXPECT_LT(chief.signals[0].first, worker0.signals[0].first + 3s + 100ms);
}

TEST(JobSupervisor, AFailedJobIsRestartedFromItsCheckpointAndTheRestartIsCounted) {
    CheckpointFile checkpoint;
    FakeTaskHost host([](const TaskStart& s) {
        if (s.restarts == 0 && s.rank == 1) return endsAfter(1s, killedBy(SIGKILL));
        return s.restarts == 0 ? runsUntilSignalled() : endsAfter(1s, exited(0));
    });
    const JobSpec spec = restartable(multiWorker(2), 3, checkpoint.path());
    const JobRun r = runJob(host, spec);
    EXPECT_FALSE(r.outcome.failed);
    EXPECT_EQ(r.outcome.exitCode, 0);
    EXPECT_EQ(r.outcome.restarts, 1);
    const std::string failure = labelOf(host.task("worker 0"), "worker rank 1") + " was killed by signal 9 (Killed)";
    EXPECT_TRUE(r.said("multi_worker job: " + failure + "; the chief") &&
                r.said("; restarting every task from the last checkpoint (" + checkpoint.path() + ")"))
        << ::testing::PrintToString(r.log);
    EXPECT_TRUE(r.said("multi_worker job (restart 1): 2 worker process(es)"));
    // The second incarnation knows it is one, and has a token of its own.
    EXPECT_EQ(host.task("the chief", 1).restarts, 1);
    EXPECT_EQ(host.task("worker 0", 1).restarts, 1);
    EXPECT_NE(host.task("the chief", 1).token, host.task("the chief", 0).token);
    EXPECT_EQ(host.tasks().size(), 4u);
}

TEST(JobSupervisor, RestartsAreCappedByMaxRestarts) {
    CheckpointFile checkpoint;
    FakeTaskHost host(rankOneFailsAfterASecond);
    const JobSpec spec = restartable(multiWorker(2), 2, checkpoint.path());
    const JobRun r = runJob(host, spec);
    ASSERT_TRUE(r.outcome.failed);
    EXPECT_EQ(r.outcome.restarts, 2);
    EXPECT_EQ(r.outcome.why, NoRestart::RestartsUsedUp);
    EXPECT_EQ(host.tasks().size(), 6u);  // three incarnations of two tasks
    EXPECT_THROW(host.task("the chief", 3), std::logic_error);
    const std::string& h = r.outcome.history;
    EXPECT_EQ(h.rfind(labelOf(host.task("worker 0", 0), "worker rank 1"), 0), 0u) << h;
    EXPECT_NE(h.find("\n  restart 1: " + labelOf(host.task("worker 0", 1), "worker rank 1")), std::string::npos) << h;
    EXPECT_NE(h.find("\n  restart 2: " + labelOf(host.task("worker 0", 2), "worker rank 1")), std::string::npos) << h;
    EXPECT_EQ(std::count_if(r.log.begin(), r.log.end(),
                            [](const std::string& l) { return l.find("restarting every task") != std::string::npos; }),
              2);
}

TEST(JobSupervisor, WithoutACheckpointOnDiskAFailedJobIsNotRestarted) {
    for (const bool named : {false, true}) {
        FakeTaskHost host(rankOneFailsAfterASecond);
        const fs::path never = fs::temp_directory_path() / "trainbench-jobsupervisor-never-written.ckpt";
        const JobSpec spec = restartable(multiWorker(2), 3, named ? never.string() : "");
        const JobRun r = runJob(host, spec);
        ASSERT_TRUE(r.outcome.failed);
        EXPECT_EQ(r.outcome.restarts, 0);
        EXPECT_EQ(r.outcome.why, named ? NoRestart::NoCheckpointYet : NoRestart::NoCheckpoint);
        EXPECT_EQ(host.tasks().size(), 2u);
    }
}

TEST(JobSupervisor, ADeadWorkerDoesNotEndAParameterServerJob) {
    FakeTaskHost host([](const TaskStart& s) {
        if (s.task.name() == "worker 0") return endsAfter(1s, killedBy(SIGKILL));
        return s.rank == 0 ? endsAfter(3s, exited(0)) : runsUntilSignalled();
    });
    const JobRun r = runJob(host, parameterServer(2, 1));
    EXPECT_FALSE(r.outcome.failed);
    EXPECT_EQ(r.outcome.exitCode, 0);
    EXPECT_TRUE(r.said("parameter_server job: " + labelOf(host.task("worker 0"), "worker 0") +
                       " was killed by signal 9 (Killed); its steps go to the other workers"))
        << ::testing::PrintToString(r.log);
    // The others go on until the chief is done, then are told to stop.
    EXPECT_TRUE(host.task("worker 1").signals.empty() || host.task("worker 1").signals[0].first >= 3s);
}

TEST(JobSupervisor, AQuietJobSaysNothingOfALostWorker) {
    FakeTaskHost host([](const TaskStart& s) {
        return s.task.name() == "worker 0" ? endsAfter(1s, killedBy(SIGKILL)) : endsAfter(2s, exited(0));
    });
    JobSpec spec = parameterServer(2, 1);
    spec.quiet = true;
    const JobRun r = runJob(host, spec);
    EXPECT_FALSE(r.outcome.failed);
    EXPECT_TRUE(r.log.empty()) << ::testing::PrintToString(r.log);
}

TEST(JobSupervisor, ADeadParameterServerFailsTheJobNamingTheTask) {
    FakeTaskHost host([](const TaskStart& s) {
        return s.task.type == "ps" ? endsAfter(1s, killedBy(SIGKILL)) : runsUntilSignalled();
    });
    const JobRun r = runJob(host, parameterServer(1, 1));
    ASSERT_TRUE(r.outcome.failed);
    EXPECT_EQ(r.outcome.last.failure.rfind(labelOf(host.task("parameter server 0"), "parameter server 0") +
                                               " was killed by signal 9 (Killed)",
                                           0),
              0u)
        << r.outcome.last.failure;
    EXPECT_EQ(host.task("worker 0").signalsOnly(), std::vector<int>{SIGTERM});
}

TEST(JobSupervisor, AStoppedParameterServerIsEndedOnceTheChiefIsDone) {
    FakeTaskHost host([](const TaskStart& s) {
        FakeTask t = s.task.type == "ps" ? runsUntilSignalled() : endsAfter(2s, exited(0));
        if (s.task.type == "ps") t.stopsAfter = 500ms;
        return t;
    });
    // A long timeout: the stopped server is not ended for being stopped that long, but because the
    // job is done (the chief plus the grace period, 10 s at most).
    const JobRun r = runJob(host, parameterServer(1, 1, 60s));
    EXPECT_FALSE(r.outcome.failed);
    EXPECT_EQ(r.outcome.exitCode, 0);
    const auto& ps = host.task("parameter server 0");
    ASSERT_EQ(ps.signalsOnly(), std::vector<int>{SIGKILL});
    EXPECT_GE(ps.signals[0].first, 2s + 10s);
    EXPECT_LT(ps.signals[0].first, 2s + 10s + 100ms);
    EXPECT_LT(host.elapsed(), 13s);
}

TEST(JobSupervisor, CtrlCIsRelayedToTheChiefAndWorkersButNotToTheParameterServers) {
    FakeTaskHost host([](const TaskStart& s) {
        // The chief shuts the parameter servers down once it has stopped.
        return s.task.type == "ps" ? endsAfter(1500ms, exited(0)) : runsUntilSignalled();
    });
    host.stopRequestAfter = 1s;
    const JobRun r = runJob(host, parameterServer(2, 1));
    EXPECT_FALSE(r.outcome.failed);
    EXPECT_TRUE(r.outcome.last.stopped);
    EXPECT_EQ(r.outcome.exitCode, kExitStopped);
    for (const std::string name : {"the chief", "worker 0", "worker 1"}) {
        ASSERT_EQ(host.task(name).signalsOnly(), std::vector<int>{SIGINT}) << name;
        EXPECT_GE(host.task(name).signals[0].first, 1s);
        EXPECT_LT(host.task(name).signals[0].first, 1s + 100ms);
    }
    EXPECT_TRUE(host.task("parameter server 0").signals.empty());
}

TEST(JobSupervisor, CtrlCIsRelayedToEveryTaskOfASynchronousJobOnce) {
    FakeTaskHost host([](const TaskStart&) { return runsUntilSignalled(); });
    host.stopRequestAfter = 1s;
    const JobRun r = runJob(host, multiWorker(3));
    EXPECT_FALSE(r.outcome.failed);
    EXPECT_EQ(r.outcome.exitCode, kExitStopped);
    for (const auto& t : host.tasks()) EXPECT_EQ(t.signalsOnly(), std::vector<int>{SIGINT}) << t.name;
}

TEST(JobSupervisor, AJobThatFailsAfterCtrlCIsNotRestarted) {
    CheckpointFile checkpoint;
    FakeTaskHost host([](const TaskStart& s) {
        FakeTask t = runsUntilSignalled();
        if (s.rank == 1) t.stopStatus = exited(1);  // fails while stopping, before the chief has stopped
        else t.reaction = 1s;
        return t;
    });
    host.stopRequestAfter = 1s;
    const JobSpec spec = restartable(multiWorker(2), 3, checkpoint.path());
    const JobRun r = runJob(host, spec);
    ASSERT_TRUE(r.outcome.failed);
    EXPECT_EQ(r.outcome.why, NoRestart::Stopped);
    EXPECT_EQ(r.outcome.restarts, 0);
}

TEST(JobSupervisor, AStoppedWorkerFailsASynchronousJobAfterTheTimeout) {
    FakeTaskHost host([](const TaskStart& s) {
        FakeTask t = runsUntilSignalled();
        if (s.rank == 1) t.stopsAfter = 1s;
        return t;
    });
    const JobRun r = runJob(host, multiWorker(2, 3s));
    const auto& worker = host.task("worker 0");
    ASSERT_TRUE(r.outcome.failed);
    ASSERT_EQ(worker.signalsOnly(), std::vector<int>{SIGKILL});
    // Stopped at 1 s, seen within a look (50 ms), ended once seen stopped for the timeout.
    EXPECT_GE(worker.signals[0].first, 1s + 3s);
    EXPECT_LT(worker.signals[0].first, 1s + 3s + 100ms);
    EXPECT_EQ(r.outcome.last.failure.rfind(labelOf(worker, "worker rank 1") +
                                               " was stopped (SIGSTOP or a debugger) for 3 s, making no progress, "
                                               "and was ended by the launcher (SIGKILL); the chief",
                                           0),
              0u)
        << r.outcome.last.failure;
}

TEST(JobSupervisor, ATaskThatIgnoresTheStopIsKilledAfterTheGracePeriodAndTheJobStillSucceeds) {
    FakeTaskHost host([](const TaskStart& s) {
        if (s.rank == 0) return endsAfter(1s, exited(0));
        FakeTask t = runsUntilSignalled();
        t.ignoresSigterm = true;
        return t;
    });
    const JobRun r = runJob(host, multiWorker(2, 2s));
    EXPECT_FALSE(r.outcome.failed);
    EXPECT_EQ(r.outcome.exitCode, 0);
    const auto& worker = host.task("worker 0");
    ASSERT_EQ(worker.signalsOnly(), (std::vector<int>{SIGTERM, SIGKILL}));
    EXPECT_GE(worker.signals[0].first, 1s + 2s);
    EXPECT_LT(worker.signals[0].first, 1s + 2s + 100ms);
    EXPECT_GE(worker.signals[1].first, worker.signals[0].first + 2s);
    EXPECT_LT(worker.signals[1].first, worker.signals[0].first + 2s + 100ms);
}

TEST(JobSupervisor, ATaskThatCannotStartFailsTheJobAndTheStartedOnesAreEnded) {
    FakeTaskHost host([](const TaskStart& s) {
        FakeTask t = runsUntilSignalled();
        if (s.rank == 2) t.cannotStart = "No such file or directory";
        return t;
    });
    const JobRun r = runJob(host, multiWorker(3));
    ASSERT_TRUE(r.outcome.failed);
    EXPECT_EQ(r.outcome.last.failure, "cannot start worker 1: No such file or directory");
    ASSERT_EQ(host.tasks().size(), 2u);
    for (const auto& t : host.tasks()) {
        EXPECT_EQ(t.signalsOnly(), std::vector<int>{SIGKILL}) << t.name;
        EXPECT_TRUE(t.reaped) << t.name;
    }
}

}  // namespace
}  // namespace trainbench::app
