#pragma once
// What the multi-process integration tests share: a small MLP experiment on Fashion-MNIST with a
// step limit, the steps a run committed, how far a job's loss curve is from a reference run's, the
// processes of a running job's tasks, a long job in the background, and what becomes of a job when
// one of its tasks is stopped (SIGSTOP).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"
#include "tests/engine/becomestrue.h"
#include "tests/integration/clirunner.h"

namespace trainbench::testing {

// `strategy` is the body of the experiment's "strategy" object ("" for a single device).
// `evalEvery`: evaluate on the test set every so many steps (0: never), on its first `testLimit` examples.
inline std::string writeExperiment(const std::filesystem::path& dir, const std::string& name, int64_t batch,
                                   int steps, const std::string& strategy, int evalEvery = 0, int testLimit = 500) {
    const auto path = dir / (name + ".json");
    std::ofstream f(path);
    f << "{\"name\": \"" << name << "\", \"seed\": 5, \"data\": {\"train_limit\": " << batch * steps
      << ", \"test_limit\": " << testLimit << "}, \"model\": {\"preset\": \"mlp\"},"
      << "\"train\": {\"batch_size\": " << batch << ", \"epochs\": 0, \"max_steps\": " << steps
      << ", \"eval_every_steps\": " << evalEvery << ", \"eval_at_epoch_end\": false, \"threads\": 1}, \"strategy\": {" << strategy
      << "}}";
    return path.string();
}

// The run's committed steps; none while the job has not created the store yet.
inline std::vector<profiler::StepSample> stepsOf(const std::string& db, const std::string& name) {
    if (!std::filesystem::exists(db)) return {};
    try {
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const auto row = store.findRun(name);
        if (!row) return {};
        return store.steps(row->id);
    } catch (const profiler::StoreError&) {
        return {};  // created but not yet set up by the chief
    }
}

// The largest relative difference between the two runs' losses, step by step (over the shorter run).
inline double worstRelativeLossDifference(const std::vector<profiler::StepSample>& steps,
                                          const std::vector<profiler::StepSample>& reference) {
    double worst = 0;
    for (size_t i = 0; i < std::min(steps.size(), reference.size()); ++i)
        worst = std::max(worst, std::abs(steps[i].loss - reference[i].loss) / reference[i].loss);
    return worst;
}

// A run split over ranks against one device: trains "single" (one device, unless `db` holds it
// already) and `name` (`strategy`, the strategy section's members) for 50 steps at batch 64 into `db`, and checks what every such
// strategy owes the user: the run's loss curve is the single device's within 1e-5 relative, and
// replica_steps hold each of its `ranks` ranks every step, in rank order, with `samplesPerRank`
// examples and compute time. Returns the run's stderr (its messages), or nothing when it failed.
struct SplitRun {
    std::string err;
    profiler::RunRow row;
    std::vector<profiler::ReplicaStepRow> ranks;
};
inline std::optional<SplitRun> followsOneDevice(const TempDir& tmp, const std::string& db, const std::string& name,
                                                const std::string& strategy, int ranks, int64_t samplesPerRank) {
    constexpr int kSteps = 50;
    if (stepsOf(db, "single").size() != static_cast<size_t>(kSteps)) {
        auto single = runCli({"run", writeExperiment(tmp.path, "single", 64, kSteps, ""), "--db", db, "-q"}, tmp.path);
        EXPECT_EQ(single.exitCode, 0) << single.err;
    }
    auto run = runCli({"run", writeExperiment(tmp.path, name, 64, kSteps, strategy), "--db", db}, tmp.path);
    EXPECT_EQ(run.exitCode, 0) << run.err << run.out;
    const auto reference = stepsOf(db, "single");
    const auto steps = stepsOf(db, name);
    EXPECT_EQ(reference.size(), static_cast<size_t>(kSteps));
    EXPECT_EQ(steps.size(), static_cast<size_t>(kSteps));
    if (reference.size() != kSteps || run.exitCode != 0 || steps.size() != kSteps) return std::nullopt;
    const double worst = worstRelativeLossDifference(steps, reference);
    EXPECT_LT(worst, 1e-5) << name << ": losses differ from one device's by up to " << worst;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun(name);
    EXPECT_TRUE(row.has_value());
    if (!row) return std::nullopt;
    SplitRun out{run.err, *row, store.replicaSteps(row->id)};
    EXPECT_EQ(out.ranks.size(), static_cast<size_t>(kSteps * ranks));
    for (size_t i = 0; i < out.ranks.size(); ++i) {
        EXPECT_EQ(out.ranks[i].replica.rank, static_cast<int>(i % static_cast<size_t>(ranks)));
        EXPECT_EQ(out.ranks[i].replica.samples, samplesPerRank);
        EXPECT_GT(out.ranks[i].replica.compute_seconds, 0.0);
    }
    return out;
}

// The task processes of the job training `experiment` (`trainbench-cli worker <experiment> ...`)
// that run now, with their environment (where TF_CONFIG names the task).
struct TaskProcess {
    pid_t pid;
    std::string environment;
};
inline std::vector<TaskProcess> taskProcesses(const std::string& experiment) {
    std::vector<TaskProcess> out;
    const std::string args = std::string("worker") + '\0' + experiment + '\0';
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string pid = entry.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream cmd(entry.path() / "cmdline");
        const std::string cl((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
        if (cl.find(args) == std::string::npos) continue;
        std::ifstream env(entry.path() / "environ");
        out.push_back({std::stoi(pid), std::string((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>())});
    }
    return out;
}

// The process of the job training `experiment` whose TF_CONFIG names the task `type` `index`
// (worker 0 of a multi_worker job is rank 1), once the run has committed `minSteps` steps; -1 if
// that does not happen within a minute.
inline pid_t taskOnceTrained(const std::string& db, const std::string& name, const std::string& experiment,
                             const std::string& type, int index, size_t minSteps, std::chrono::milliseconds poll) {
    const std::string task = "\"task\":{\"index\":" + std::to_string(index) + ",\"type\":\"" + type + "\"}";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(poll);
        if (stepsOf(db, name).size() < minSteps) continue;
        for (const TaskProcess& p : taskProcesses(experiment))
            if (p.environment.find(task) != std::string::npos) return p.pid;
    }
    return -1;
}

// The rank `rank` of an MPI job training `experiment` (OMPI_COMM_WORLD_RANK in its environment, as
// mpirun sets it), once the run has committed `minSteps` steps; -1 if that does not happen within a minute.
inline pid_t mpiRankOnceTrained(const std::string& db, const std::string& name, const std::string& experiment, int rank,
                                size_t minSteps, std::chrono::milliseconds poll) {
    const std::string marker = std::string(1, '\0') + "OMPI_COMM_WORLD_RANK=" + std::to_string(rank) + '\0';
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(poll);
        if (stepsOf(db, name).size() < minSteps) continue;
        for (const TaskProcess& p : taskProcesses(experiment))
            if (p.environment.find(marker) != std::string::npos) return p.pid;
    }
    return -1;
}

// A job that would train for long (epochs of 100 steps, 100,000 steps), running in the background;
// `strategy` is the body of its strategy object. `quiet`: run with -q (no progress, no notes).
struct LongJob {
    std::string name, db, experiment;
    CliProcess process;
    LongJob(const TempDir& tmp, const std::string& jobName, const std::string& strategy, bool quiet = true)
        : name(jobName),
          db((tmp.path / "runs.db").string()),
          experiment(writeExperiment(tmp.path, jobName, 64, 100000, strategy)),
          process(arguments(experiment, db, quiet), tmp.path) {}

private:
    static std::vector<std::string> arguments(const std::string& experiment, const std::string& db, bool quiet) {
        std::vector<std::string> a = {"run", experiment, "--db", db, "--set", "data.train_limit=6400"};
        if (quiet) a.push_back("-q");
        return a;
    }
};



// What became of a job after one of its tasks was stopped with SIGSTOP (a frozen host, a debugger).
struct StoppedJob {
    pid_t pid = -1;                   // the stopped task's; -1 if it was not found
    double seconds = 0;               // from the SIGSTOP until the launcher exited (or gave up waiting)
    std::optional<CliResult> result;  // the launcher's; nothing if it still ran at the limit
    std::vector<pid_t> leftBehind;    // task processes of the job still there once the launcher had ended
    bool stoppedTaskGone = false;     // the stopped process no longer exists then
};

// Stops task `type` `index` of `job` once its run has `minSteps` steps, and waits up to `limit` for
// the launcher to exit. Whatever happens, nothing of the job outlives this: the launcher, if it
// still runs, and any task left are killed here (SIGKILL ends a stopped process too).
inline StoppedJob stopTaskOfJob(LongJob& job, const std::string& type, int index, size_t minSteps,
                                std::chrono::seconds limit) {
    StoppedJob out;
    out.pid = taskOnceTrained(job.db, job.name, job.experiment, type, index, minSteps, std::chrono::milliseconds(50));
    if (out.pid <= 0) return out;
    const auto stoppedAt = std::chrono::steady_clock::now();
    ::kill(out.pid, SIGSTOP);
    out.result = job.process.waitFor(limit);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - stoppedAt).count();
    if (!out.result) {
        job.process.signal(SIGKILL);
        job.process.wait();
    }
    for (const TaskProcess& p : taskProcesses(job.experiment)) {
        out.leftBehind.push_back(p.pid);
        ::kill(p.pid, SIGKILL);
    }
    if (std::find(out.leftBehind.begin(), out.leftBehind.end(), out.pid) == out.leftBehind.end())
        out.stoppedTaskGone = ::kill(out.pid, 0) == -1 && errno == ESRCH;
    ::kill(out.pid, SIGKILL);
    return out;
}

// What a task that stops mid-run (SIGSTOP: a frozen host, a debugger) must do to a job of `kind`
// ("multi_worker", "parameter_server") whose strategy object's body is `strategy`: task `type` 0 is
// stopped after `minSteps`
// steps of a long job with strategy.timeout_s `timeoutS` and no restarts; the job fails within 3 x
// timeout_s; the launcher's message and the run's (recorded failed, with its step) name the task
// as `named` ("the chief (pid ") followed by its pid and address; no process of the job is left.
// Prints how long the job took to fail, the figure docs/reliability.md quotes.
inline void expectAStoppedTaskFailsTheJob(const std::string& kind, const std::string& strategy, const std::string& type,
                                          const std::string& named, size_t minSteps, int timeoutS) {
    SCOPED_TRACE("stopped: " + type);
    TempDir tmp;
    LongJob job(tmp, "stopped-" + type,
                strategy + ", \"timeout_s\": " + std::to_string(timeoutS) + ", \"max_restarts\": 0");
    const StoppedJob s = stopTaskOfJob(job, type, 0, minSteps, std::chrono::seconds(60));
    ASSERT_GT(s.pid, 0) << "no " << type << " process found";
    ASSERT_TRUE(s.result) << "the job still ran 60 s after its " << type << " stopped";
    std::printf("[ measured ] %s, %s stopped: the job failed %.2f s later (timeout_s %d)\n", kind.c_str(), type.c_str(),
                s.seconds, timeoutS);
    EXPECT_EQ(s.result->exitCode, 1) << s.result->err;
    EXPECT_LT(s.seconds, 3.0 * timeoutS) << "3 x timeout_s";
    EXPECT_TRUE(s.leftBehind.empty()) << s.leftBehind.size() << " task process(es) left running";
    EXPECT_TRUE(s.stoppedTaskGone) << "the stopped process " << s.pid << " is still there";
    const std::string who = named + std::to_string(s.pid) + ", 127.0.0.1:";
    EXPECT_NE(s.result->err.find(kind + " job failed"), std::string::npos) << s.result->err;
    EXPECT_NE(s.result->err.find(who), std::string::npos) << s.result->err;
    EXPECT_NE(s.result->err.find(") was stopped (SIGSTOP or a debugger)"), std::string::npos) << s.result->err;
    auto store = profiler::RunStore::open(job.db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun(job.name);
    ASSERT_TRUE(row && row->message);
    EXPECT_EQ(row->status, profiler::RunStatus::Failed);
    EXPECT_NE(row->message->find("step "), std::string::npos) << *row->message;
    EXPECT_NE(row->message->find(who), std::string::npos) << *row->message;
}

}  // namespace trainbench::testing
