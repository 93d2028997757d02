#include "tests/app/faketaskhost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "app/job/jobtask.h"

namespace trainbench::testing {

namespace {
// A supervisor that never lets its job end would spin the virtual clock for ever: stopped here.
constexpr milliseconds kVirtualLimit = std::chrono::hours(1);
}  // namespace

std::vector<int> FakeTaskRecord::signalsOnly() const {
    std::vector<int> out;
    for (const auto& s : signals) out.push_back(s.second);
    return out;
}

pid_t FakeTaskHost::start(const app::TaskStart& start) {
    FakeTask script = script_ ? script_(start) : FakeTask{};
    if (!script.cannotStart.empty()) throw std::runtime_error(script.cannotStart);
    FakeTaskRecord t;
    t.name = start.task.name();
    t.rank = start.rank;
    t.restarts = start.restarts;
    t.spec = start.spec;
    t.token = start.token;
    t.pid = static_cast<pid_t>(1000 + tasks_.size());
    t.startedAt = now_;
    // A task stopped before its end does not get there.
    if (script.endsAfter && (!script.stopsAfter || *script.stopsAfter > *script.endsAfter)) {
        t.endsAt = now_ + *script.endsAfter;
        t.status = script.endStatus;
    }
    t.script = std::move(script);
    tasks_.push_back(std::move(t));
    return tasks_.back().pid;
}

profiler::ProcessIdentity FakeTaskHost::identity(pid_t pid) {
    profiler::ProcessIdentity id;
    id.host = "fake";
    id.pid = find(pid).pid;
    return id;
}

bool FakeTaskHost::stopped(pid_t pid) {
    const FakeTaskRecord& t = find(pid);
    return !ended(t) && t.script.stopsAfter && now_ >= t.startedAt + *t.script.stopsAfter;
}

void FakeTaskHost::signal(pid_t pid, int sig) {
    FakeTaskRecord& t = find(pid);
    EXPECT_FALSE(t.reaped) << t.name << " signalled (" << sig << ") after it was reaped: its pid may be another's";
    t.signals.emplace_back(now_, sig);
    if (ended(t)) return;
    if (sig == SIGKILL) {
        t.endsAt = now_;
        t.status = killedBy(SIGKILL);
        return;
    }
    if (stopped(pid) || (sig == SIGINT && t.script.ignoresSigint) || (sig == SIGTERM && t.script.ignoresSigterm))
        return;
    const milliseconds at = now_ + t.script.reaction;
    if (!t.endsAt || *t.endsAt > at) {
        t.endsAt = at;
        t.status = t.script.stopStatus;
    }
}

std::optional<app::TaskExit> FakeTaskHost::waitForExit(Clock::time_point deadline) {
    FakeTaskRecord* first = nullptr;
    for (FakeTaskRecord& t : tasks_)
        if (!t.reaped && t.endsAt && (!first || *t.endsAt < *first->endsAt)) first = &t;
    const milliseconds until = std::chrono::duration_cast<milliseconds>(deadline - origin());
    if (first && *first->endsAt <= until) {
        advanceTo(*first->endsAt);
        first->reaped = true;
        return app::TaskExit{first->pid, first->status};
    }
    advanceTo(until);
    return std::nullopt;
}

void FakeTaskHost::reap(pid_t pid) {
    FakeTaskRecord& t = find(pid);
    if (!t.endsAt) throw std::logic_error("reap of " + t.name + ", which does not end");
    advanceTo(*t.endsAt);
    t.reaped = true;
}

const FakeTaskRecord& FakeTaskHost::task(const std::string& name, int restarts) const {
    for (const FakeTaskRecord& t : tasks_)
        if (t.name == name && t.restarts == restarts) return t;
    throw std::logic_error("no task '" + name + "' after " + std::to_string(restarts) + " restart(s)");
}

FakeTaskRecord& FakeTaskHost::find(pid_t pid) {
    for (FakeTaskRecord& t : tasks_)
        if (t.pid == pid) return t;
    throw std::logic_error("no fake task with pid " + std::to_string(pid));
}

void FakeTaskHost::advanceTo(milliseconds t) {
    now_ = std::max(now_, t);
    if (stopRequestAfter && now_ >= *stopRequestAfter) stopRequested = true;
    if (now_ > kVirtualLimit) throw std::runtime_error("the fake job still runs after an hour of virtual time");
}

}  // namespace trainbench::testing
