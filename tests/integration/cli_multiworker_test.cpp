// multi_worker end to end: `trainbench-cli run` starts real worker processes on loopback that sum
// their gradients with Gloo. The job follows one device's loss curve on the global batch; the chief
// records every rank's step breakdown; a worker killed mid-run fails the job fast, naming it; a
// rank stopped (SIGSTOP) fails it within 3 x strategy.timeout_s, naming it, leaving nothing behind.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/multiworkerjob.h"

using namespace trainbench;
using trainbench::testing::CliProcess;
using trainbench::testing::LongJob;
using trainbench::testing::runCli;
using trainbench::testing::stepsOf;
using trainbench::testing::taskOnceTrained;
using trainbench::testing::TempDir;
using trainbench::testing::worstRelativeLossDifference;
using trainbench::testing::writeExperiment;

namespace {

const std::string kTwoRanks = "\"type\": \"multi_worker\", \"replicas\": 2";

}  // namespace

TEST(CliMultiWorker, FollowsOneDevicesLossCurveAndRecordsEveryRank) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    auto single = runCli({"run", writeExperiment(tmp.path, "single", 64, 50, ""), "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(single.exitCode, 0) << single.err;
    const auto reference = stepsOf(db, "single");
    ASSERT_EQ(reference.size(), 50u);
    for (int workers : {2, 4}) {
        const std::string name = "workers" + std::to_string(workers);
        auto job = runCli({"run",
                           writeExperiment(tmp.path, name, 64, 50,
                                           "\"type\": \"multi_worker\", \"replicas\": " + std::to_string(workers) +
                                               ", \"threads_per_replica\": 1"),
                           "--db", db, "-q"},
                          tmp.path);
        ASSERT_EQ(job.exitCode, 0) << job.err << job.out;
        const auto steps = stepsOf(db, name);
        ASSERT_EQ(steps.size(), 50u);
        const double worst = worstRelativeLossDifference(steps, reference);
        EXPECT_LT(worst, 1e-5) << workers << " workers: losses differ from one device's by up to " << worst;

        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const auto row = store.findRun(name);
        ASSERT_TRUE(row);
        EXPECT_EQ(row->strategy, "multi_worker");
        EXPECT_EQ(row->devices, "cpu:1x" + std::to_string(workers));
        EXPECT_EQ(row->replicas, workers);
        const auto ranks = store.replicaSteps(row->id);
        ASSERT_EQ(ranks.size(), 50u * static_cast<size_t>(workers));
        for (size_t i = 0; i < ranks.size(); ++i) {
            EXPECT_EQ(ranks[i].replica.rank, static_cast<int>(i % static_cast<size_t>(workers)));
            EXPECT_EQ(ranks[i].replica.samples, 64 / workers);
            EXPECT_GT(ranks[i].replica.compute_seconds, 0.0);
        }
    }
    // Only the chief records: one run per job.
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    EXPECT_EQ(store.listRuns().size(), 3u);
}

TEST(CliMultiWorker, AKilledWorkerFailsTheJobNamingIt) {
    TempDir tmp;
    LongJob job(tmp, "doomed", kTwoRanks + ", \"timeout_s\": 120");
    const std::string& db = job.db;
    // Once the job has trained a few steps, kill the worker (not the chief).
    const pid_t workerPid =
        taskOnceTrained(db, "doomed", job.experiment, "worker", 0, 5, std::chrono::milliseconds(200));
    ASSERT_GT(workerPid, 0) << "no worker process found";
    const auto killedAt = std::chrono::steady_clock::now();
    ::kill(workerPid, SIGKILL);
    const auto result = job.process.wait();
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killedAt).count();
    EXPECT_EQ(result.exitCode, 1) << result.err;
    EXPECT_LT(took, 60.0) << "a dead socket is noticed long before the 120 s timeout";
    EXPECT_NE(result.err.find("worker rank 1 (pid " + std::to_string(workerPid) + ", 127.0.0.1:"), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("killed by signal 9"), std::string::npos) << result.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("doomed");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Failed);
    ASSERT_TRUE(row->message);
    // The run names the step and the dead worker. Usually the chief's own error does (the
    // collective failed on the closed connection) with the launcher's account added; when the
    // worker died as the chief's send to it was queued, Gloo leaves the chief waiting, the launcher
    // ends it, and the launcher's account is the message.
    EXPECT_NE(row->message->find("step "), std::string::npos) << *row->message;
    EXPECT_NE(row->message->find("worker rank 1 (pid " + std::to_string(workerPid) + ", 127.0.0.1:"), std::string::npos)
        << *row->message;
    EXPECT_NE(row->message->find(") was killed by signal 9"), std::string::npos) << *row->message;
    EXPECT_TRUE(row->message->find("allReduceSum") != std::string::npos ||
                row->message->find("the chief (rank 0, pid " + std::to_string(row->pid) + ", 127.0.0.1:") !=
                    std::string::npos)
        << *row->message;
    EXPECT_GE(stepsOf(db, "doomed").size(), 5u) << "steps recorded before the failure are kept";
}

// The chief killed: its run is not left for a later reader to find interrupted; the launcher marks
// it failed with what happened, after the last step it committed.
TEST(CliMultiWorker, AKilledChiefFailsTheRunSayingSo) {
    TempDir tmp;
    LongJob job(tmp, "headless", kTwoRanks + ", \"timeout_s\": 120");
    const std::string& db = job.db;
    const pid_t chiefPid =
        taskOnceTrained(db, "headless", job.experiment, "chief", 0, 5, std::chrono::milliseconds(100));
    ASSERT_GT(chiefPid, 0) << "no chief process found";
    ::kill(chiefPid, SIGKILL);
    const auto result = job.process.wait();
    EXPECT_EQ(result.exitCode, 1) << result.err;
    EXPECT_NE(result.err.find("the chief (rank 0, pid " + std::to_string(chiefPid) + ", 127.0.0.1:"), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find(") was killed by signal 9"), std::string::npos) << result.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("headless");
    ASSERT_TRUE(row && row->message);
    EXPECT_EQ(row->status, profiler::RunStatus::Failed) << *row->message;
    const auto steps = stepsOf(db, "headless");
    ASSERT_GE(steps.size(), 5u);
    EXPECT_EQ(row->message->rfind("job failed after step " + std::to_string(steps.back().step) +
                                      ": the chief (rank 0, pid " + std::to_string(chiefPid) + ", 127.0.0.1:",
                                  0),
              0u)
        << *row->message;
    EXPECT_NE(row->message->find(") was killed by signal 9"), std::string::npos) << *row->message;
}

TEST(CliMultiWorker, WorkerNeedsTfConfigAndToken) {
    TempDir tmp;
    const std::string x = writeExperiment(tmp.path, "w", 64, 5, "\"type\": \"multi_worker\", \"replicas\": 2");
    ::unsetenv("TF_CONFIG");
    auto noConfig = runCli({"worker", x}, tmp.path);
    EXPECT_EQ(noConfig.exitCode, 2);
    EXPECT_NE(noConfig.err.find("TF_CONFIG is not set"), std::string::npos) << noConfig.err;
    ::setenv("TF_CONFIG", R"({"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 3}})", 1);
    auto badConfig = runCli({"worker", x}, tmp.path);
    EXPECT_EQ(badConfig.exitCode, 2);
    EXPECT_NE(badConfig.err.find("task.index: 3 is outside cluster.worker"), std::string::npos) << badConfig.err;
    ::setenv("TF_CONFIG", R"({"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 0}})", 1);
    ::unsetenv("TRAINBENCH_JOB_TOKEN");
    auto noToken = runCli({"worker", x}, tmp.path);
    EXPECT_EQ(noToken.exitCode, 2);
    EXPECT_NE(noToken.err.find("TRAINBENCH_JOB_TOKEN is not set"), std::string::npos) << noToken.err;
    ::unsetenv("TF_CONFIG");
}

// A worker killed mid-run: the job restarts every task from the last checkpoint, the run continues
// as the same run, no more steps than the checkpoint interval are trained twice, and the result is
// the uninterrupted job's, loss for loss.
TEST(CliMultiWorker, AKilledWorkerIsRestartedFromTheCheckpoint) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string strategy = "\"type\": \"multi_worker\", \"replicas\": 2, \"threads_per_replica\": 1";
    auto clean = runCli({"run", writeExperiment(tmp.path, "clean", 64, 150, strategy), "--db", db, "-q", "--set",
                         "train.checkpoint_every_steps=20"},
                        tmp.path);
    ASSERT_EQ(clean.exitCode, 0) << clean.err;
    const auto reference = stepsOf(db, "clean");
    ASSERT_EQ(reference.size(), 150u);

    const std::string x = writeExperiment(tmp.path, "restarted", 64, 150, strategy);
    CliProcess job({"run", x, "--db", db, "-q", "--set", "train.checkpoint_every_steps=20"}, tmp.path);
    const pid_t workerPid = taskOnceTrained(db, "restarted", x, "worker", 0, 50, std::chrono::milliseconds(20));
    ASSERT_GT(workerPid, 0) << "no worker process found";
    ::kill(workerPid, SIGKILL);
    const auto result = job.wait();
    ASSERT_EQ(result.exitCode, 0) << result.err;
    EXPECT_NE(result.err.find("restarting every task from the last checkpoint"), std::string::npos) << result.err;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("restarted");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Completed);
    EXPECT_EQ(store.listRuns().size(), 2u) << "the restarted job continues its run";
    const auto steps = store.steps(row->id);
    ASSERT_EQ(steps.size(), reference.size());
    for (size_t i = 0; i < steps.size(); ++i) {
        EXPECT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
        EXPECT_EQ(steps[i].loss, reference[i].loss) << "step " << i + 1;
    }
    int64_t restarts = 0, resumedFrom = -1;
    for (const auto& [key, value] : store.attributes(row->id)) {
        if (key == "job.restarts") restarts = std::stoll(value);
        if (key == "job.resumed_from_step") resumedFrom = std::stoll(value);
    }
    EXPECT_EQ(restarts, 1);
    EXPECT_EQ(resumedFrom % 20, 0);
    EXPECT_GE(resumedFrom, 40) << "killed after step 50: at most one interval (20 steps) is lost";
}

// A rank that stops (SIGSTOP: a frozen host, a debugger) makes no progress, and its peer would wait
// for it in a collective: within 3 x strategy.timeout_s the job fails naming the stopped rank (pid,
// address), the run is recorded failed with the step, and no process of the job is left.
TEST(CliMultiWorker, AStoppedRankFailsTheJobWithinThreeTimeoutsNamingIt) {
    using trainbench::testing::expectAStoppedTaskFailsTheJob;
    expectAStoppedTaskFailsTheJob("multi_worker", kTwoRanks, "worker", "worker rank 1 (pid ", 5, 3);
    expectAStoppedTaskFailsTheJob("multi_worker", kTwoRanks, "chief", "the chief (rank 0, pid ", 5, 3);
}

// On a fresh store the chief measures the machine's roofs (a second or more on a loaded machine).
// It does so after the last step, so a job whose timeout is shorter than that measurement still
// trains: its other ranks never wait for it beyond one step.
TEST(CliMultiWorker, MeasuringTheMachineDoesNotStallTheOtherRanks) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "fresh", 64, 20,
                                          "\"type\": \"multi_worker\", \"replicas\": 2, \"threads_per_replica\": 1, "
                                          "\"timeout_s\": 1, \"max_restarts\": 0");
    auto job = runCli({"run", x, "--db", db}, tmp.path);
    ASSERT_EQ(job.exitCode, 0) << job.err;
    const std::string all = job.out + job.err;
    EXPECT_NE(all.find("machine: "), std::string::npos) << "the roofs were measured: " << all;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("fresh");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Completed);
    EXPECT_EQ(store.steps(row->id).size(), 20u);
    const auto input = store.profileInput(row->id);
    EXPECT_TRUE(input.roofs) << "the verdict had the roofline";
}
