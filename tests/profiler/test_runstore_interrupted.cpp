// Runs whose process died without finishing: a real SIGKILL mid-run, and doctored rows for the
// other cases (dead pid, reused pid, reboot, another host, a live writer).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "profiler/store/processidentity.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/storeerror.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::insertRunningRow;
using testutil::makeEval;
using testutil::makeStep;
using testutil::RawDb;
using testutil::TempDir;

// A pid that surely belongs to no process now: a child that has exited and been reaped.
pid_t deadPid() {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    return child;
}

bool contains(const std::optional<std::string>& text, const std::string& part) {
    return text && text->find(part) != std::string::npos;
}

TEST(RunStoreInterrupted, SigkilledWriterLeavesAnInterruptedRunWithItsCommittedSteps) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);  // schema first; no connection may cross the fork below

    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        try {
            RunSpec spec;
            spec.name = "doomed";
            RunWriterOptions fast;
            fast.commitInterval = std::chrono::milliseconds(20);
            RunWriter writer(path, spec, fast);
            for (int64_t s = 1;; ++s) {
                writer.step(makeStep(s));
                if (s % 25 == 0) writer.eval(makeEval(s));
                usleep(1000);
            }
        } catch (...) {
            _exit(2);
        }
    }

    // Wait, reading only, until the child has committed a good number of steps.
    size_t committed = 0;
    RunId id;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (committed < 50 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        RunStore reader = RunStore::open(path, OpenMode::ReadOnly);
        const auto runs = reader.listRuns();
        if (runs.empty()) continue;
        id = runs[0].id;
        ASSERT_EQ(runs[0].status, RunStatus::Running);
        committed = reader.steps(id).size();
    }
    ASSERT_GE(committed, 50u) << "the child never committed steps";

    // While the writer lives, a read-write open leaves its run alone.
    {
        RunStore store = RunStore::open(path);
        EXPECT_EQ(store.markInterruptedRuns(), 0);
        EXPECT_EQ(store.run(id)->status, RunStatus::Running);
        EXPECT_EQ(store.run(id)->pid, child);
    }

    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGKILL);

    {
        RawDb raw(path);
        EXPECT_EQ(raw.text("PRAGMA integrity_check"), "ok");
        EXPECT_EQ(raw.text("SELECT status FROM runs"), "running");  // nobody has looked yet
    }

    RunStore store = RunStore::open(path);
    const auto row = store.findRun("doomed");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, RunStatus::Interrupted);
    EXPECT_TRUE(contains(row->message, "process " + std::to_string(child))) << *row->message;
    EXPECT_TRUE(contains(row->message, "killed or crashed")) << *row->message;
    EXPECT_FALSE(row->ended_at);

    const auto steps = store.steps(id);
    ASSERT_GE(steps.size(), committed);
    for (size_t i = 0; i < steps.size(); ++i) {
        ASSERT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
    }
    EXPECT_EQ(row->steps, static_cast<int64_t>(steps.size()));
    EXPECT_TRUE(contains(row->message, "after step " + std::to_string(steps.size())));
    EXPECT_FALSE(store.evals(id).empty());
    EXPECT_EQ(store.markInterruptedRuns(), 0);  // marked once
}

TEST(RunStoreInterrupted, DeadPidOnThisHostIsInterrupted) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    ProcessIdentity writer = ProcessIdentity::current();
    writer.pid = deadPid();
    const int64_t id = insertRunningRow(path, writer, 3);

    RunStore store = RunStore::open(path);
    const auto row = store.run(RunId{id});
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, RunStatus::Interrupted);
    EXPECT_EQ(row->message, "process " + std::to_string(writer.pid) +
                                " ended without finishing the run (killed or crashed) after step 3");
    EXPECT_EQ(row->steps, 3);
}

TEST(RunStoreInterrupted, ReusedPidIsInterrupted) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    ProcessIdentity writer = ProcessIdentity::current();  // our pid, alive...
    ASSERT_TRUE(writer.proc_start);
    *writer.proc_start += 1000;  // ... but started at another time: not the same process
    const int64_t id = insertRunningRow(path, writer);

    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.run(RunId{id})->status, RunStatus::Interrupted);
    EXPECT_TRUE(contains(store.run(RunId{id})->message, "before its first step"));
}

TEST(RunStoreInterrupted, LiveWriterIsLeftRunning) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    const int64_t id = insertRunningRow(path, ProcessIdentity::current());
    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.markInterruptedRuns(), 0);
    EXPECT_EQ(store.run(RunId{id})->status, RunStatus::Running);
}

TEST(RunStoreInterrupted, RebootOnThisHostInterruptsEvenALivePid) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    ProcessIdentity writer = ProcessIdentity::current();
    writer.boot_id = "00000000-0000-0000-0000-000000000000";
    const int64_t id = insertRunningRow(path, writer, 1);
    RunStore store = RunStore::open(path);
    const auto row = store.run(RunId{id});
    EXPECT_EQ(row->status, RunStatus::Interrupted);
    EXPECT_TRUE(contains(row->message, "rebooted")) << row->message.value_or("");
}

TEST(RunStoreInterrupted, RunsOfOtherHostsAreLeftAlone) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    ProcessIdentity writer = ProcessIdentity::current();
    writer.host = "some-other-machine";
    writer.pid = deadPid();
    writer.boot_id = "00000000-0000-0000-0000-000000000000";
    const int64_t id = insertRunningRow(path, writer);
    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.markInterruptedRuns(), 0);
    EXPECT_EQ(store.run(RunId{id})->status, RunStatus::Running);
}

TEST(RunStoreInterrupted, ReadOnlyStoreReportsButDoesNotStoreInterruption) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    ProcessIdentity writer = ProcessIdentity::current();
    writer.pid = deadPid();
    const int64_t id = insertRunningRow(path, writer, 2);
    {
        RunStore reader = RunStore::open(path, OpenMode::ReadOnly);
        const auto runs = reader.listRuns();
        ASSERT_EQ(runs.size(), 1u);
        EXPECT_EQ(runs[0].status, RunStatus::Interrupted);
        EXPECT_EQ(runs[0].steps, 2);
        EXPECT_EQ(reader.findRun(std::to_string(id))->status, RunStatus::Interrupted);
    }
    RawDb raw(path);
    EXPECT_EQ(raw.text("SELECT status FROM runs"), "running");
}

TEST(RunStoreInterrupted, FinishedRunsAreNeverTouched) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    {
        RunWriter writer(path, RunSpec{});
        writer.step(makeStep(1));
        writer.finish(RunStatus::Completed, engine::RunSummary{});
    }
    RawDb raw(path);
    raw.exec("UPDATE runs SET pid = " + std::to_string(deadPid()));
    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.listRuns()[0].status, RunStatus::Completed);
}

// A job's launcher recording why the job failed on its chief's run.
TEST(RunStoreJobFailure, AnUnfinishedRunBecomesFailedWithTheCauseAndItsLastStep) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    ProcessIdentity chief = ProcessIdentity::current();
    chief.pid = deadPid();
    const int64_t id = insertRunningRow(path, chief, 4);
    RunStore store = RunStore::open(path);  // finds it interrupted first
    ASSERT_EQ(store.run(RunId{id})->status, RunStatus::Interrupted);
    EXPECT_TRUE(store.recordJobFailure(chief, "worker rank 1 (pid 9) was killed by signal 9 (Killed)", "other"));
    const auto row = store.run(RunId{id});
    EXPECT_EQ(row->status, RunStatus::Failed);
    EXPECT_EQ(row->message, "job failed after step 4: worker rank 1 (pid 9) was killed by signal 9 (Killed)");
    EXPECT_EQ(row->steps, 4);
    EXPECT_TRUE(row->ended_at);
    EXPECT_FALSE(store.recordJobFailure(chief, "again", "")) << "a failed run is not rewritten";
    EXPECT_EQ(store.run(RunId{id})->message, *row->message);
}

TEST(RunStoreJobFailure, ARunTheChiefFailedKeepsItsMessageWithTheOthersAdded) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    {
        RunWriter writer(path, RunSpec{});
        writer.step(makeStep(1));
        writer.finish(RunStatus::Failed, engine::RunSummary{}, "step 2: allReduceSum failed: connection closed");
    }
    RunStore store = RunStore::open(path);
    const RunId id = store.listRuns()[0].id;
    const ProcessIdentity chief = ProcessIdentity::current();  // this process wrote it
    EXPECT_TRUE(store.recordJobFailure(chief, "the whole story", "worker rank 1 (pid 9) was killed by signal 9"));
    EXPECT_EQ(store.run(id)->status, RunStatus::Failed);
    EXPECT_EQ(store.run(id)->message,
              "step 2: allReduceSum failed: connection closed; in the job, worker rank 1 (pid 9) was killed by signal 9");
    EXPECT_FALSE(store.recordJobFailure(chief, "the whole story", "worker rank 1 (pid 9) was killed by signal 9"))
        << "added once";
    EXPECT_FALSE(store.recordJobFailure(chief, "the whole story", "")) << "nothing to add";
}

TEST(RunStoreJobFailure, CompletedStoppedLiveAndOtherProcessesRunsAreLeftAlone) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    for (const RunStatus status : {RunStatus::Completed, RunStatus::Stopped}) {
        RunWriter writer(path, RunSpec{});
        writer.step(makeStep(1));
        writer.finish(status, engine::RunSummary{});
    }
    const ProcessIdentity self = ProcessIdentity::current();
    EXPECT_FALSE(RunStore::open(path).recordJobFailure(self, "cause", "others"));  // the newest: stopped
    ProcessIdentity other = self;
    other.pid = deadPid();
    EXPECT_FALSE(RunStore::open(path).recordJobFailure(other, "cause", "others")) << "no run of that process";
    const int64_t live = insertRunningRow(path, self, 2);
    RunStore store = RunStore::open(path);
    EXPECT_FALSE(store.recordJobFailure(self, "cause", "others")) << "its writer still runs";
    EXPECT_EQ(store.run(RunId{live})->status, RunStatus::Running);
    for (const RunRow& row : store.listRuns())
        EXPECT_FALSE(contains(row.message, "cause")) << row.id.value;
}

}  // namespace
}  // namespace trainbench::profiler
