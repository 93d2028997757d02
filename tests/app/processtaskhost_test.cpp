// The job supervisor's real task host: tasks are processes (here /bin/sh and sleep, standing in for
// `trainbench-cli worker`), in process groups of their own, with the default signal mask whatever
// the launcher blocks, signalled, seen stopped, reaped. And one job of such processes, end to end.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/job/jobsupervisor.h"
#include "app/job/jobtask.h"
#include "app/job/processtaskhost.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TaskCommand shell(const std::string& script, std::vector<std::string> env = {}) {
    return {"/bin/sh", {"sh", "-c", script}, std::move(env)};
}

// The one task of these tests: the chief of a job of one.
const JobTask kChief{"chief", 0, "127.0.0.1:1"};

pid_t startOne(ProcessTaskHost& host) { return host.start(TaskStart{kChief, 0, {}, "token", 0}); }

// Its exit, waiting at most 10 s; a task still running then is killed (the test has failed).
std::optional<TaskExit> exitWithin10s(ProcessTaskHost& host, pid_t pid) {
    const auto deadline = host.now() + 10s;
    while (host.now() < deadline)
        if (auto e = host.waitForExit(host.now() + 50ms)) return e;
    host.signal(pid, SIGKILL);
    host.reap(pid);
    return std::nullopt;
}

class ProcessTaskHostTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("trainbench-taskhost-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(ProcessTaskHostTest, ATaskRunsItsCommandWithItsEnvironmentInAProcessGroupOfItsOwn) {
    const fs::path out = dir_ / "out";
    ProcessTaskHost host([&](const TaskStart& s) {
        EXPECT_EQ(&s.task, &kChief);
        return shell("echo \"$TASK_NOTE\" > '" + out.string() + "'; cat /proc/$$/stat >> '" + out.string() + "'; exit 3",
                     {"TASK_NOTE=" + s.token});
    });
    const pid_t pid = startOne(host);
    ASSERT_GT(pid, 0);
    const std::optional<TaskExit> e = exitWithin10s(host, pid);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->pid, pid);
    ASSERT_TRUE(WIFEXITED(e->status));
    EXPECT_EQ(WEXITSTATUS(e->status), 3);
    std::ifstream f(out);
    std::string note, stat;
    std::getline(f, note);
    std::getline(f, stat);
    EXPECT_EQ(note, "token");
    // /proc/<pid>/stat: pid (comm) state ppid pgrp ...: its group is its own, so that a Ctrl-C at the
    // terminal reaches the launcher alone.
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string state;
    long ppid = 0, pgrp = 0;
    fields >> state >> ppid >> pgrp;
    EXPECT_EQ(ppid, ::getpid());
    EXPECT_EQ(pgrp, pid);
}

TEST_F(ProcessTaskHostTest, ATaskDoesNotInheritTheSignalsTheLauncherBlocks) {
    // trainbench-cli blocks SIGINT and SIGTERM in every thread (StopSignals); its tasks must still get them.
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
    ProcessTaskHost host([](const TaskStart&) { return TaskCommand{"/bin/sleep", {"sleep", "30"}, {}}; });
    const pid_t pid = startOne(host);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    host.signal(pid, SIGTERM);
    const std::optional<TaskExit> e = exitWithin10s(host, pid);
    ASSERT_TRUE(e);
    ASSERT_TRUE(WIFSIGNALED(e->status));
    EXPECT_EQ(WTERMSIG(e->status), SIGTERM);
}

TEST_F(ProcessTaskHostTest, AStoppedTaskIsSeenStoppedAndSigkillEndsIt) {
    ProcessTaskHost host([](const TaskStart&) { return TaskCommand{"/bin/sleep", {"sleep", "30"}, {}}; });
    const pid_t pid = startOne(host);
    EXPECT_FALSE(host.stopped(pid));
    EXPECT_EQ(host.identity(pid).proc_start, profiler::ProcessIdentity::startTimeOf(pid));
    host.signal(pid, SIGSTOP);
    const auto deadline = host.now() + 10s;
    while (!host.stopped(pid) && host.now() < deadline) std::this_thread::sleep_for(10ms);
    const bool seenStopped = host.stopped(pid);
    host.signal(pid, SIGKILL);
    const std::optional<TaskExit> e = exitWithin10s(host, pid);
    EXPECT_TRUE(seenStopped);
    ASSERT_TRUE(e);
    ASSERT_TRUE(WIFSIGNALED(e->status));
    EXPECT_EQ(WTERMSIG(e->status), SIGKILL);
    EXPECT_FALSE(host.stopped(pid));
}

TEST_F(ProcessTaskHostTest, AProgramThatCannotStartSaysWhy) {
    ProcessTaskHost host([&](const TaskStart&) { return TaskCommand{(dir_ / "no-such-program").string(), {"x"}, {}}; });
    try {
        startOne(host);
        FAIL() << "started a program that does not exist";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "No such file or directory");
    }
    EXPECT_FALSE(host.waitForExit(host.now()));
}

// A job of shell processes: worker rank 1 is killed from outside, the chief (which would wait for
// ever) is ended after the grace period, and the failure names both, the cause first.
TEST_F(ProcessTaskHostTest, AJobOfProcessesFailsNamingTheKilledWorkerFirst) {
    ProcessTaskHost host([](const TaskStart& s) {
        return s.rank == 0 ? TaskCommand{"/bin/sleep", {"sleep", "30"}, {}} : shell("kill -KILL $$");
    });
    JobSpec spec;
    spec.workers = 2;
    spec.timeout = 1s;
    spec.quiet = true;
    const std::atomic<bool> noStop{false};
    const JobOutcome r = JobSupervisor(host, spec, noStop, [](const std::string&) {}).run();
    ASSERT_TRUE(r.failed);
    EXPECT_EQ(r.why, NoRestart::NoCheckpoint);
    const std::string& f = r.last.failure;
    const size_t worker = f.find("worker rank 1 (pid "), chief = f.find("the chief (rank 0, pid ");
    ASSERT_NE(worker, std::string::npos) << f;
    ASSERT_NE(chief, std::string::npos) << f;
    EXPECT_LT(worker, chief) << f;
    EXPECT_NE(f.find("was killed by signal 9 (Killed)"), std::string::npos) << f;
    EXPECT_NE(f.find("did not end in time and was ended by the launcher (SIGKILL)"), std::string::npos) << f;
    EXPECT_GT(r.last.chief.pid, 0);
}

}  // namespace
}  // namespace trainbench::app
