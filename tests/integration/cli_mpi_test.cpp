// multi_worker over Open MPI end to end (strategy.collective "mpi"): `trainbench-cli run` starts the
// ranks under mpirun. The job follows one device's loss curve on the global batch and the chief
// records every rank; a rank killed mid-run fails the job naming it (mpirun's words), and with a
// checkpoint the job restarts and ends with the clean job's losses; a stop request (Ctrl-C) reaches
// every rank through mpirun and the run is recorded stopped.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <string>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/multiworkerjob.h"
#include "tests/mpisanitizers.h"

using namespace trainbench;
using trainbench::testing::CliProcess;
using trainbench::testing::LongJob;
using trainbench::testing::mpiRankOnceTrained;
using trainbench::testing::runCli;
using trainbench::testing::followsOneDevice;
using trainbench::testing::stepsOf;
using trainbench::testing::TempDir;
using trainbench::testing::writeExperiment;

namespace {

const std::string kMpiRanks =
    "\"type\": \"multi_worker\", \"replicas\": 2, \"threads_per_replica\": 1, \"collective\": \"mpi\"";

// Every test here starts an MPI job.
const bool kPrepared = (trainbench::testing::prepareMpiUnderSanitizers(), true);

}  // namespace

TEST(CliMpi, FollowsOneDevicesLossCurveAndRecordsEveryRank) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // Each rank trains its half of the global batch.
    const auto job = followsOneDevice(tmp, db, "mpi", kMpiRanks, 2, 32);
    ASSERT_TRUE(job);
    EXPECT_NE(job->err.find("2 worker process(es) under mpirun (Open MPI)"), std::string::npos) << job->err;
    EXPECT_NE(job->err.find("joined the job as rank 0 of 2 (mpi)"), std::string::npos) << job->err;
    EXPECT_EQ(job->row.strategy, "multi_worker");
    EXPECT_EQ(job->row.devices, "cpu:1x2");
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    EXPECT_EQ(store.listRuns().size(), 2u) << "only the chief (rank 0) records";
}

TEST(CliMpi, AKilledRankFailsTheJobNamingIt) {
    TempDir tmp;
    LongJob job(tmp, "doomed", kMpiRanks + ", \"timeout_s\": 120");
    const pid_t rank1 = mpiRankOnceTrained(job.db, "doomed", job.experiment, 1, 5, std::chrono::milliseconds(100));
    ASSERT_GT(rank1, 0) << "no rank 1 process found";
    const auto killedAt = std::chrono::steady_clock::now();
    ::kill(rank1, SIGKILL);
    const auto result = job.process.wait();
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killedAt).count();
    EXPECT_EQ(result.exitCode, 1) << result.err;
    EXPECT_LT(took, 60.0) << "mpirun notices a dead rank long before the 120 s timeout";
    const std::string named = "process rank 1 with PID " + std::to_string(rank1);
    EXPECT_NE(result.err.find("multi_worker job failed"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find(named), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("signal 9"), std::string::npos) << result.err;
    auto store = profiler::RunStore::open(job.db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("doomed");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Failed);
    ASSERT_TRUE(row->message);
    EXPECT_NE(row->message->find(named), std::string::npos) << *row->message;
    EXPECT_GE(stepsOf(job.db, "doomed").size(), 5u) << "steps recorded before the failure are kept";
}

TEST(CliMpi, AKilledRankIsRestartedFromTheCheckpoint) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    auto clean = runCli({"run", writeExperiment(tmp.path, "clean", 64, 150, kMpiRanks), "--db", db, "-q", "--set",
                         "train.checkpoint_every_steps=20"},
                        tmp.path);
    ASSERT_EQ(clean.exitCode, 0) << clean.err;
    const auto reference = stepsOf(db, "clean");
    ASSERT_EQ(reference.size(), 150u);

    const std::string x = writeExperiment(tmp.path, "restarted", 64, 150, kMpiRanks);
    CliProcess job({"run", x, "--db", db, "-q", "--set", "train.checkpoint_every_steps=20"}, tmp.path);
    const pid_t rank1 = mpiRankOnceTrained(db, "restarted", x, 1, 50, std::chrono::milliseconds(20));
    ASSERT_GT(rank1, 0) << "no rank 1 process found";
    ::kill(rank1, SIGKILL);
    const auto result = job.wait();
    ASSERT_EQ(result.exitCode, 0) << result.err;
    EXPECT_NE(result.err.find("restarting every task from the last checkpoint"), std::string::npos) << result.err;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("restarted");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Completed);
    const auto steps = store.steps(row->id);
    ASSERT_EQ(steps.size(), reference.size());
    for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].loss, reference[i].loss) << "step " << i + 1;
    int64_t restarts = 0;
    for (const auto& [key, value] : store.attributes(row->id))
        if (key == "job.restarts") restarts = std::stoll(value);
    EXPECT_EQ(restarts, 1);
}

TEST(CliMpi, AStopRequestReachesEveryRankAndTheRunIsStopped) {
    TempDir tmp;
    LongJob job(tmp, "stopped", kMpiRanks);
    const pid_t rank1 = mpiRankOnceTrained(job.db, "stopped", job.experiment, 1, 5, std::chrono::milliseconds(50));
    ASSERT_GT(rank1, 0) << "no rank 1 process found";
    job.process.signal(SIGINT);
    const auto result = job.process.wait();
    EXPECT_EQ(result.exitCode, 130) << result.err;
    auto store = profiler::RunStore::open(job.db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("stopped");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Stopped) << (row->message ? *row->message : "");
}
