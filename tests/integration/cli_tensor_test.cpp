// strategy "tensor" end to end on Fashion-MNIST: `trainbench-cli run` trains W1's MLP with every dense
// layer split across two devices (threads); its loss curve is one device's on the same batch, the
// run records each device's step breakdown, and the profile reads it back; malformed tensor keys and
// an emulated device are refused naming the key.
#include <gtest/gtest.h>

#include <string>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/multiworkerjob.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::stepsOf;
using trainbench::testing::TempDir;
using trainbench::testing::worstRelativeLossDifference;
using trainbench::testing::writeExperiment;

TEST(CliTensor, FollowsOneDevicesLossCurveAndRecordsEveryDevice) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    auto single = runCli({"run", writeExperiment(tmp.path, "single", 64, 50, ""), "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(single.exitCode, 0) << single.err;
    const auto reference = stepsOf(db, "single");
    ASSERT_EQ(reference.size(), 50u);

    auto run = runCli({"run", writeExperiment(tmp.path, "split", 64, 50, "\"type\": \"tensor\", \"tensor\": 2"), "--db", db},
                      tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    EXPECT_NE(run.err.find("tensor on cpu:1x2 (threads x tensor-parallel devices)"), std::string::npos) << run.err;
    const auto steps = stepsOf(db, "split");
    ASSERT_EQ(steps.size(), 50u);
    const double worst = worstRelativeLossDifference(steps, reference);
    EXPECT_LT(worst, 1e-5) << "losses differ from one device's by up to " << worst;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("split");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->strategy, "tensor");
    EXPECT_EQ(row->devices, "cpu:1x2");
    const auto devices = store.replicaSteps(row->id);
    ASSERT_EQ(devices.size(), 100u);
    for (size_t i = 0; i < devices.size(); ++i) {
        EXPECT_EQ(devices[i].replica.rank, static_cast<int>(i % 2));
        EXPECT_EQ(devices[i].replica.samples, 64) << "every device sees the whole batch";
        EXPECT_GT(devices[i].replica.compute_seconds, 0.0);
        EXPECT_GT(devices[i].replica.comm_seconds, 0.0) << "the activations' all-reduces";
    }
    auto profile = runCli({"profile", "split", "--db", db}, tmp.path);
    ASSERT_EQ(profile.exitCode, 0) << profile.err;
    EXPECT_NE(profile.out.find("tensor on cpu:1x2"), std::string::npos) << profile.out;
    // Its blocked time is the all-reduces of activations, never called a gradient exchange.
    EXPECT_EQ(profile.out.find("Communication-bound: "), std::string::npos) << profile.out;
    EXPECT_NE(profile.out.find("tensor-parallel all-reduces"), std::string::npos) << profile.out;
}

TEST(CliTensor, MalformedKeysAndEmulatedDevicesAreRefusedNamingTheKey) {
    TempDir tmp;
    const std::string x = writeExperiment(tmp.path, "split", 64, 5, "\"type\": \"tensor\", \"tensor\": 2");
    auto zero = runCli({"run", x, "--set", "strategy.tensor=0"}, tmp.path);
    EXPECT_EQ(zero.exitCode, 2);
    EXPECT_NE(zero.err.find("strategy.tensor"), std::string::npos) << zero.err;
    auto emulated = runCli({"run", x, "--db", (tmp.path / "r.db").string(), "--set", "device.type=a100-sxm4-80gb"}, tmp.path);
    EXPECT_NE(emulated.exitCode, 0);
    EXPECT_NE(emulated.err.find("strategy.type 'tensor' trains on this host's CPU"), std::string::npos) << emulated.err;
    auto replicated = runCli({"run", x, "--set", "strategy.replicas=2"}, tmp.path);
    EXPECT_EQ(replicated.exitCode, 2);
    EXPECT_NE(replicated.err.find("strategy.replicas: is 2 but a tensor run trains one replica here"), std::string::npos)
        << replicated.err;
    auto notTensor = runCli({"run", writeExperiment(tmp.path, "m", 64, 5, "\"type\": \"mirrored\", \"tensor\": 4")}, tmp.path);
    EXPECT_EQ(notTensor.exitCode, 2);
    EXPECT_NE(notTensor.err.find("strategy.tensor: is 4 but strategy.type is \"mirrored\"; it is a 'tensor' key"),
              std::string::npos)
        << notTensor.err;
}
