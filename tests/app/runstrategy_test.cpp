// buildStrategy, the stage that makes a run's model and strategy: for every kind, from an
// experiment and its plan, the strategy the run trains with and the line it says about it. Jobs
// join for real on loopback (a one-rank multi_worker job, a parameter_server chief).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/experiment/experiment.h"
#include "app/run/runplan.h"
#include "app/run/runstrategy.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/strategy/mirroredstrategy.h"
#include "engine/strategy/multiworkerstrategy.h"
#include "engine/strategy/parameterserverstrategy.h"

namespace trainbench::app {
namespace {

const engine::Dims kShape{1, 28, 28};
constexpr int64_t kClasses = 10;

struct Built {
    RunModel model;
    std::vector<std::string> said;
};

Built build(const std::string& sections, std::optional<engine::ClusterSpec> cluster = std::nullopt,
            const std::string& token = "", const std::string& model = R"({"preset": "mlp"})") {
    RunRequest request;
    request.experiment = parseExperiment("{" + sections + R"(, "model": )" + model + "}", "test.json");
    request.cluster = cluster;
    request.jobToken = token;
    Built b;
    request.log = [&b](const std::string& m) { b.said.push_back(m); };
    const RunPlan plan = planRun(request.experiment, request.cluster, {});
    b.model = buildStrategy(request, plan, kShape, kClasses, request.log);
    return b;
}

TEST(RunStrategy, SingleIsOneDevice) {
    const Built b = build(R"("train": {"threads": 2, "batch_size": 64})");
    ASSERT_NE(dynamic_cast<engine::SingleStrategy*>(b.model.strategy.get()), nullptr);
    EXPECT_FALSE(b.model.deviceMemory.has_value());
    const int64_t params = b.model.strategy->model().paramCount();
    EXPECT_EQ(b.said, std::vector<std::string>{"model: " + std::to_string(params) +
                                               " parameters; single on cpu:2 (threads x replicas), global batch 64"});
}

TEST(RunStrategy, MirroredIsItsReplicas) {
    const Built b = build(R"("train": {"threads": 2, "batch_size": 64}, "strategy": {"type": "mirrored", "replicas": 2})");
    ASSERT_NE(dynamic_cast<engine::MirroredStrategy*>(b.model.strategy.get()), nullptr);
    EXPECT_EQ(b.model.strategy->devices(), "cpu:1x2");
    ASSERT_EQ(b.said.size(), 1u);
    EXPECT_NE(b.said[0].find("; mirrored on cpu:1x2 (threads x replicas), global batch 64"), std::string::npos) << b.said[0];
}

// Emulated replicas (GPUs, a TPU slice's cores): their footprint checked, their numerics one pass.
TEST(RunStrategy, EmulatedReplicasAreOnePass) {
    for (const std::string& sections :
         {std::string(R"("strategy": {"type": "mirrored", "replicas": 4}, "device": {"type": "a100-sxm4-40gb"})"),
          std::string(R"("strategy": {"type": "tpu_pod", "slice": "v3-8"}, "device": {"type": "tpu-v3"})")}) {
        const Built b = build(R"("train": {"threads": 1, "batch_size": 128}, "data": {"drop_remainder": true}, )" +
                              sections);
        ASSERT_NE(dynamic_cast<engine::SingleStrategy*>(b.model.strategy.get()), nullptr) << sections;
        ASSERT_TRUE(b.model.deviceMemory.has_value()) << sections;
        EXPECT_TRUE(b.model.deviceMemory->fits);
        ASSERT_EQ(b.said.size(), 1u);
        EXPECT_NE(b.said[0].find("replica(s), numerics on 1 host thread(s)), global batch 128"), std::string::npos)
            << b.said[0];
    }
}

// A model whose step does not fit one replica's memory fails here, before it is allocated.
TEST(RunStrategy, AModelThatDoesNotFitTheEmulatedDeviceFailsFirst) {
    try {
        // Two dense layers of 65536 units: 4.3e9 parameters, 17 GB in float32 alone (a core has 16 GB).
        build(R"("train": {"batch_size": 1024}, "strategy": {"type": "tpu_pod", "slice": "v3-8"},
                 "device": {"type": "tpu-v3"}, "data": {"drop_remainder": true})",
              std::nullopt, "",
              R"({"layers": [{"type": "flatten"}, {"type": "dense", "units": 65536}, {"type": "dense", "units": 65536},
                             {"type": "dense", "units": 10}]})");
        FAIL() << "a model of 4.3e9 parameters fitted a TPU v3 core";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("memory"), std::string::npos) << e.what();
    }
}

TEST(RunStrategy, MultiWorkerJoinsItsJob) {
    engine::RendezvousServerConfig rc;
    rc.token = engine::RendezvousServer::randomToken();
    engine::RendezvousServer store(rc);
    engine::ClusterSpec cluster;
    cluster.chief = {{"127.0.0.1", store.port()}};
    cluster.task_type = "chief";
    const Built b = build(R"("train": {"threads": 1, "batch_size": 32}, "strategy": {"type": "multi_worker"})",
                          cluster, rc.token);
    auto* mw = dynamic_cast<engine::MultiWorkerStrategy*>(b.model.strategy.get());
    ASSERT_NE(mw, nullptr);
    EXPECT_EQ(mw->replicas(), 1);
    ASSERT_EQ(b.said.size(), 2u);
    EXPECT_EQ(b.said[0], "joined the job as rank 0 of 1 (gloo)");
    EXPECT_NE(b.said[1].find("; multi_worker on cpu:1x1"), std::string::npos) << b.said[1];
}

// The chief listens for its workers at once; its parameter servers are reached at the first step.
TEST(RunStrategy, ParameterServerChiefCoordinates) {
    engine::ClusterSpec cluster;
    cluster.chief = {{"127.0.0.1", 0}};
    cluster.worker = {{"127.0.0.1", 1}, {"127.0.0.1", 1}};
    cluster.ps = {{"127.0.0.1", 1}};
    cluster.task_type = "chief";
    const Built b = build(R"("train": {"threads": 2, "batch_size": 32}, "strategy": {"type": "parameter_server"})",
                          cluster, "job-token");
    auto* ps = dynamic_cast<engine::ParameterServerStrategy*>(b.model.strategy.get());
    ASSERT_NE(ps, nullptr);
    EXPECT_EQ(ps->replicas(), 2);
    EXPECT_EQ(ps->devices(), "cpu:1x2");
    EXPECT_GT(ps->port(), 0);
}

}  // namespace
}  // namespace trainbench::app
