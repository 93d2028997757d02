#pragma once
// Fake tasks for the job supervisor's unit tests (app/job/): in-process objects on a virtual clock
// that end with a given status after a given time, stop (as by SIGSTOP), act on SIGINT and SIGTERM
// or ignore them, or cannot start. Every signal a task gets is recorded with its time, so a test can
// check who was told what and when, to the tick, without waiting for it.
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/job/taskhost.h"

namespace trainbench::testing {

using std::chrono::milliseconds;

// Wait statuses as waitpid encodes them.
inline int exited(int code) { return W_EXITCODE(code, 0); }
inline int killedBy(int sig) { return W_EXITCODE(0, sig); }

// What a fake task does, in virtual time from its start.
struct FakeTask {
    std::optional<milliseconds> endsAfter = milliseconds(1000);  // nullopt: runs until a signal ends it
    int endStatus = exited(0);
    std::optional<milliseconds> stopsAfter;  // stopped from then on (as by SIGSTOP): acts on SIGKILL only
    bool ignoresSigint = false, ignoresSigterm = false;
    int stopStatus = exited(130);            // how it ends on a SIGINT or SIGTERM it acts on
    milliseconds reaction{20};               // ... this long after the signal
    std::string cannotStart;                 // not empty: starting it fails saying this
};

// One task as the fake host started it.
struct FakeTaskRecord {
    std::string name;  // JobTask::name(): "the chief", "worker 0", "parameter server 0"
    size_t rank = 0;
    int restarts = 0;
    engine::ClusterSpec spec;
    std::string token;
    FakeTask script;
    pid_t pid = -1;
    milliseconds startedAt{};
    std::vector<std::pair<milliseconds, int>> signals;  // when (since the host's start) and which
    std::optional<milliseconds> endsAt;                 // scheduled end, since the host's start
    int status = 0;                                     // its wait status then
    bool reaped = false;

    std::vector<int> signalsOnly() const;
};

class FakeTaskHost final : public app::TaskHost {
public:
    // The script of each task; by default every task ends with status 0 after a second.
    using Script = std::function<FakeTask(const app::TaskStart&)>;
    explicit FakeTaskHost(Script script = {}) : script_(std::move(script)) {}

    pid_t start(const app::TaskStart& start) override;
    profiler::ProcessIdentity identity(pid_t pid) override;
    void signal(pid_t pid, int sig) override;
    bool stopped(pid_t pid) override;
    // Jumps to the first end due by `deadline`, or to `deadline`.
    std::optional<app::TaskExit> waitForExit(Clock::time_point deadline) override;
    void reap(pid_t pid) override;
    Clock::time_point now() override { return origin() + now_; }

    // The user's stop request (Ctrl-C), raised `stopRequestAfter` into the job when set.
    std::atomic<bool> stopRequested{false};
    std::optional<milliseconds> stopRequestAfter;

    const std::vector<FakeTaskRecord>& tasks() const { return tasks_; }
    // The task of that name in the incarnation after `restarts` restarts; fails the test when none.
    const FakeTaskRecord& task(const std::string& name, int restarts = 0) const;
    milliseconds elapsed() const { return now_; }

private:
    static Clock::time_point origin() { return Clock::time_point(std::chrono::hours(1)); }
    FakeTaskRecord& find(pid_t pid);
    bool ended(const FakeTaskRecord& t) const { return t.endsAt && *t.endsAt <= now_; }
    void advanceTo(milliseconds t);

    Script script_;
    std::vector<FakeTaskRecord> tasks_;
    milliseconds now_{0};
};

}  // namespace trainbench::testing
