// makeStrategy builds every kind from one StrategySpec: the class its kind (and emulation) picks,
// with the replicas, threads and model the spec gives; jobs join for real on loopback.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rendezvous/rendezvousserver.h"
#include "engine/strategy/mirroredstrategy.h"
#include "engine/strategy/multiworkerstrategy.h"
#include "engine/strategy/parameterserverstrategy.h"
#include "engine/strategy/strategyfactory.h"
#include "modelspecs.h"

namespace trainbench::engine {
namespace {

using namespace std::chrono_literals;
using namespace testmodels;

const Dims kShape{1, 6, 6};
constexpr int64_t kClasses = 3;

// conv (no bias) -> batch norm -> ReLU -> flatten -> dense 3.
StrategySpec specOf(StrategyKind kind, int replicas = 1, int threads = 1) {
    StrategySpec s;
    s.kind = kind;
    s.replica = {.model = custom({conv(4, 3, 1, 1, false), of(LayerKind::BatchNorm), relu, flatten, dense(kClasses)}),
                 .sampleShape = kShape, .numClasses = kClasses, .optimizer = OptimizerConfig{}, .seed = 7,
                 .threads = threads};
    s.replicas = replicas;
    return s;
}

// One step's loss on a batch whose halves differ in scale: per-replica batch norm changes it.
double firstLoss(Strategy& s) {
    const int64_t n = 8, size = 36;
    std::vector<float> x(static_cast<size_t>(n * size));
    for (int64_t i = 0; i < n * size; ++i)
        x[static_cast<size_t>(i)] = (i < n * size / 2 ? 0.1f : 3.0f) * static_cast<float>(1 + i % 7);
    std::vector<int32_t> y = {0, 1, 2, 0, 1, 2, 0, 1};
    s.bindThreads();
    return s.step(BatchView{x.data(), y.data(), n}, 1, 11, {}).loss;
}

TEST(StrategyFactory, SingleIsOneDeviceOfItsThreads) {
    const std::unique_ptr<Strategy> s = makeStrategy(specOf(StrategyKind::Single, 1, 2));
    ASSERT_NE(dynamic_cast<SingleStrategy*>(s.get()), nullptr);
    EXPECT_EQ(s->name(), "single");
    EXPECT_EQ(s->replicas(), 1);
    EXPECT_EQ(s->devices(), "cpu:2");
    EXPECT_EQ(s->model().numClasses(), kClasses);
    EXPECT_EQ(s->optimizer().stepsBefore(), 0);
}

TEST(StrategyFactory, MirroredIsReplicasInThisProcess) {
    StrategySpec spec = specOf(StrategyKind::Mirrored, 2);
    spec.exchange = {.bucketMb = 0.0, .overlap = false};
    const std::unique_ptr<Strategy> s = makeStrategy(spec);
    auto* mirrored = dynamic_cast<MirroredStrategy*>(s.get());
    ASSERT_NE(mirrored, nullptr);
    EXPECT_EQ(s->replicas(), 2);
    EXPECT_EQ(s->devices(), "cpu:1x2");
    // bucketMb 0: one bucket per layer with parameters (conv, batch norm, dense).
    EXPECT_EQ(mirrored->buckets().size(), 3u);
}

// Emulated replicas (mirrored, tpu_pod) are one pass over the global batch, each replica's rows
// normalised on their own: a step's loss differs from one device's on the same batch.
TEST(StrategyFactory, EmulatedReplicasAreOnePassWithPerReplicaBatchNorm) {
    const std::unique_ptr<Strategy> one = makeStrategy(specOf(StrategyKind::Single));
    for (StrategyKind kind : {StrategyKind::Mirrored, StrategyKind::TpuPod}) {
        StrategySpec spec = specOf(kind, 2);
        spec.emulated = true;
        const std::unique_ptr<Strategy> s = makeStrategy(spec);
        ASSERT_NE(dynamic_cast<SingleStrategy*>(s.get()), nullptr) << strategyKindName(kind);
        EXPECT_EQ(s->replicas(), 1) << strategyKindName(kind);
        EXPECT_EQ(s->model().paramCount(), one->model().paramCount());
    }
    StrategySpec emulated = specOf(StrategyKind::Mirrored, 2);
    emulated.emulated = true;
    const std::unique_ptr<Strategy> sharded = makeStrategy(emulated);
    const std::unique_ptr<Strategy> whole = makeStrategy(specOf(StrategyKind::Single));
    const double shardedLoss = firstLoss(*sharded), wholeLoss = firstLoss(*whole);
    EXPECT_NE(shardedLoss, wholeLoss);
    // One emulated replica is one device.
    StrategySpec single = specOf(StrategyKind::Single);
    single.emulated = true;
    const std::unique_ptr<Strategy> same = makeStrategy(single);
    EXPECT_EQ(firstLoss(*same), wholeLoss);
}

TEST(StrategyFactory, TpuPodNeedsAnEmulatedSlice) {
    try {
        makeStrategy(specOf(StrategyKind::TpuPod, 8));
        FAIL() << "tpu_pod built without emulation";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("emulated TPU slice"), std::string::npos) << e.what();
    }
}

TEST(StrategyFactory, JobsNeedTheirTask) {
    for (StrategyKind kind : {StrategyKind::MultiWorker, StrategyKind::ParameterServer}) {
        try {
            makeStrategy(specOf(kind));
            FAIL() << strategyKindName(kind) << " built without a job";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()), std::string(strategyKindName(kind)) +
                                                 " runs as a job of processes and needs this process's task (a "
                                                 "cluster spec)");
        }
    }
}

// A job of one rank: the chief serves the rendezvous store and joins its own Gloo group.
TEST(StrategyFactory, MultiWorkerJoinsItsJob) {
    RendezvousServerConfig rc;
    rc.token = RendezvousServer::randomToken();
    RendezvousServer store(rc);
    StrategySpec spec = specOf(StrategyKind::MultiWorker);
    JobSpec job;
    job.cluster.chief = {{"127.0.0.1", store.port()}};
    job.cluster.task_type = "chief";
    job.token = rc.token;
    job.timeout = 30s;
    spec.job = job;
    std::vector<std::string> said;
    spec.log = [&](const std::string& m) { said.push_back(m); };
    const std::unique_ptr<Strategy> s = makeStrategy(spec);
    auto* mw = dynamic_cast<MultiWorkerStrategy*>(s.get());
    ASSERT_NE(mw, nullptr);
    EXPECT_EQ(mw->rank(), 0);
    EXPECT_EQ(s->replicas(), 1);
    EXPECT_EQ(s->devices(), "cpu:1x1");
    EXPECT_EQ(said, std::vector<std::string>{"joined the job as rank 0 of 1 (gloo)"});
}

// The chief of a parameter_server job listens for its workers at once (its servers are reached at
// the first step, so none runs here).
TEST(StrategyFactory, ParameterServerCoordinatesItsWorkers) {
    StrategySpec spec = specOf(StrategyKind::ParameterServer, 3, 2);
    JobSpec job;
    job.cluster.chief = {{"127.0.0.1", 0}};
    job.cluster.worker = {{"127.0.0.1", 1}, {"127.0.0.1", 1}, {"127.0.0.1", 1}};
    job.cluster.ps = {{"127.0.0.1", 1}};
    job.cluster.task_type = "chief";
    job.token = "job-token";
    spec.job = job;
    const std::unique_ptr<Strategy> s = makeStrategy(spec);
    auto* ps = dynamic_cast<ParameterServerStrategy*>(s.get());
    ASSERT_NE(ps, nullptr);
    EXPECT_TRUE(s->asynchronous());
    EXPECT_EQ(s->replicas(), 3);
    EXPECT_EQ(s->devices(), "cpu:2x3");
    EXPECT_GT(ps->port(), 0);
}

}  // namespace
}  // namespace trainbench::engine
