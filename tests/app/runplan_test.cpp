// planRun, the first stage of a run: what an experiment's device and strategy sections come to on
// this machine (devices, replicas, threads, global batch), on its own, before anything is opened.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "app/experiment/experiment.h"
#include "app/run/runplan.h"
#include "engine/strategy/clusterspec.h"

namespace trainbench::app {
namespace {

Experiment experimentOf(const std::string& sections) {
    return parseExperiment("{" + sections + R"(, "model": {"preset": "mlp"}})", "test.json");
}

TEST(RunPlan, OneDeviceOfTheExperimentsThreads) {
    const RunPlan p = planRun(experimentOf(R"("train": {"threads": 3, "batch_size": 64})"), std::nullopt, {});
    EXPECT_FALSE(p.devices.emulated);
    EXPECT_EQ(p.devices.devices, "cpu");
    EXPECT_EQ(p.place.replicas, 1);
    EXPECT_EQ(p.place.threadsPerReplica, 3);
    EXPECT_EQ(p.place.globalBatch, 64);
    EXPECT_EQ(p.place.devices, "cpu:3");
}

TEST(RunPlan, MirroredSplitsTheThreadsOverItsReplicas) {
    const RunPlan p = planRun(experimentOf(R"("train": {"threads": 4, "batch_size": 32},
        "strategy": {"type": "mirrored", "replicas": 2, "batch_scope": "per_replica"})"), std::nullopt, {});
    EXPECT_EQ(p.place.replicas, 2);
    EXPECT_EQ(p.place.threadsPerReplica, 2);
    EXPECT_EQ(p.place.globalBatch, 64);
    EXPECT_EQ(p.place.devices, "cpu:2x2");
}

// Emulated replicas are the virtual clock's; their numerics run here on every thread.
TEST(RunPlan, TpuPodIsTheSlicesCores) {
    const RunPlan p = planRun(experimentOf(R"("train": {"threads": 2, "batch_size": 128},
        "strategy": {"type": "tpu_pod", "slice": "v3-32", "batch_scope": "per_replica"},
        "device": {"type": "tpu-v3"}, "data": {"drop_remainder": true})"), std::nullopt, {});
    EXPECT_TRUE(p.devices.emulated);
    EXPECT_EQ(p.devices.replicas, 32);
    EXPECT_EQ(p.devices.device_count, 16);  // chips
    EXPECT_EQ(p.devices.devices, "tpu-v3:v3-32");
    EXPECT_TRUE(p.devices.topology.has_value());
    EXPECT_EQ(p.place.replicas, 32);
    EXPECT_EQ(p.place.threadsPerReplica, 2);
    EXPECT_EQ(p.place.globalBatch, 128 * 32);
    EXPECT_EQ(p.place.devices, "tpu-v3:v3-32");
}

TEST(RunPlan, TpuV4ReplicasAreChips) {
    const RunPlan p = planRun(experimentOf(R"("train": {"batch_size": 128},
        "strategy": {"type": "tpu_pod", "slice": "v4-32"}, "device": {"type": "tpu-v4"},
        "data": {"drop_remainder": true})"), std::nullopt, {});
    EXPECT_EQ(p.devices.replicas, 16);
    EXPECT_EQ(p.devices.device_count, 16);
    EXPECT_EQ(p.place.globalBatch, 128);
}

TEST(RunPlan, JobsNeedTheirClusterSpec) {
    for (const char* kind : {"multi_worker", "parameter_server"}) {
        try {
            planRun(experimentOf(std::string(R"("strategy": {"type": ")") + kind + R"("})"), std::nullopt, {});
            FAIL() << kind << " planned without a cluster spec";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()), std::string("a ") + kind +
                                                 " experiment runs as a job of processes: start it with `trainbench-cli "
                                                 "run`, or each task with `trainbench-cli worker` and TF_CONFIG");
        }
    }
}

// parameter_server: the cluster spec's workers, each step one worker's share of the global batch.
TEST(RunPlan, ParameterServerWorkersAreTheClusterSpecs) {
    const engine::ClusterSpec cluster = engine::localClusterSpec(4, 2, 41000);  // chief + 3 workers, 2 ps
    const RunPlan p = planRun(experimentOf(R"("train": {"threads": 6, "batch_size": 64},
        "strategy": {"type": "parameter_server", "replicas": 3, "parameter_servers": 2})"), cluster, {});
    EXPECT_EQ(p.place.replicas, 3);
    EXPECT_EQ(p.place.threadsPerReplica, 2);
    EXPECT_EQ(p.place.globalBatch, 64 / 3);
    EXPECT_EQ(p.place.devices, "cpu:2x3");
}

// multi_worker: the job's trainers (chief and workers), whatever strategy.replicas says.
TEST(RunPlan, MultiWorkerRanksAreTheClusterSpecs) {
    const engine::ClusterSpec cluster = engine::localClusterSpec(3, 0, 41000);
    const RunPlan p = planRun(experimentOf(R"("train": {"threads": 3, "batch_size": 60},
        "strategy": {"type": "multi_worker", "replicas": 2})"), cluster, {});
    EXPECT_EQ(p.place.replicas, 3);
    EXPECT_EQ(p.place.threadsPerReplica, 1);
    EXPECT_EQ(p.place.globalBatch, 60);
    EXPECT_EQ(p.place.devices, "cpu:1x3");
}

}  // namespace
}  // namespace trainbench::app
