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
using trainbench::testing::followsOneDevice;
using trainbench::testing::TempDir;
using trainbench::testing::writeExperiment;

TEST(CliTensor, FollowsOneDevicesLossCurveAndRecordsEveryDevice) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // Every device sees the whole batch.
    const auto run = followsOneDevice(tmp, db, "split", "\"type\": \"tensor\", \"tensor\": 2", 2, 64);
    ASSERT_TRUE(run);
    EXPECT_NE(run->err.find("tensor on cpu:1x2 (threads x tensor-parallel devices)"), std::string::npos) << run->err;
    EXPECT_EQ(run->row.strategy, "tensor");
    EXPECT_EQ(run->row.devices, "cpu:1x2");
    for (const auto& r : run->ranks) EXPECT_GT(r.replica.comm_seconds, 0.0) << "the activations' all-reduces";
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
