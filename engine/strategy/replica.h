#pragma once
// One data-parallel replica: a device with its own threads, its own model and optimizer copies, and
// its side of the gradient exchange. `mirrored` runs several in one process, `multi_worker` one per
// process; both run the same step.
#include <cstdint>
#include <functional>
#include <memory>

#include "engine/data/pipeline/inputpipeline.h"
#include "engine/device/cpudevice.h"
#include "engine/model/model.h"
#include "engine/model/modelspec.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/timedupdate.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/collective/collective.h"
#include "engine/strategy/gradientsync.h"
#include "engine/telemetry/runrecords.h"

namespace trainbench::engine {

class Replica {
public:
    // Every replica is built from the same spec and seed, so all start with the same parameters.
    Replica(int threads, const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses,
            const OptimizerConfig& optimizer, uint64_t seed, Collective& collective, double bucketMb, bool overlap);

    // Replica `rank` of `replicas` takes its even share of the global batch's rows, computes the
    // gradient of the global batch's mean loss on them, sums it with the others' through the
    // collective (bucketed, as backward finishes the layers) and applies the update. Returns where
    // its time went; `localLoss` receives the mean loss over its rows (0 when it had none).
    // `midpoint` (may be empty) runs once its forward pass is done. A replica that fails still takes
    // part in the exchange (with zero gradients) before rethrowing, so the others are not left waiting.
    ReplicaStep step(int rank, int replicas, const BatchView& batch, int64_t step, uint64_t dropoutSeed,
                     const std::function<void()>& midpoint, double& localLoss);

    CpuDevice& device() { return *device_; }
    Model& model() { return *model_; }
    Optimizer& optimizer() { return *optimizer_; }
    const GradientSync& sync() const { return *sync_; }

private:
    std::unique_ptr<CpuDevice> device_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Optimizer> optimizer_;
    std::unique_ptr<TimedUpdate> update_;
    std::unique_ptr<GradientSync> sync_;
    int64_t exampleSize_ = 1;
    Tensor gradLogits_;
};

}  // namespace trainbench::engine
