#include "app/run/runstrategy.h"

#include <chrono>

#include "app/run/emulatedrun.h"
#include "engine/onnx/onnxtrainable.h"
#include "engine/strategy/strategyfactory.h"

namespace trainbench::app {

engine::StrategySpec strategySpecFor(const RunRequest& request, const RunPlan& plan, const engine::Dims& shape,
                                     int64_t classes) {
    const Experiment& x = request.experiment;
    engine::StrategySpec s;
    s.kind = x.strategy.type;
    // An imported model trains on the engine's layers, starting from its own weights.
    s.replica = {.model = engine::onnx::trainableModel(x.model, shape, classes),
                 .sampleShape = shape,
                 .numClasses = classes,
                 .optimizer = x.optimizer,
                 .seed = x.train.seed,
                 .threads = plan.place.threadsPerReplica};
    s.replicas = plan.place.replicas;
    s.emulated = plan.devices.emulated;
    s.exchange = {.bucketMb = x.strategy.bucket_mb, .overlap = x.strategy.overlap};
    if (request.cluster)
        s.job = engine::JobSpec{*request.cluster, request.jobToken,
                                std::chrono::milliseconds(static_cast<int64_t>(x.strategy.timeout_s * 1000)),
                                x.strategy.collective};
    s.stop = request.stop;
    s.stages = x.strategy.stages;
    s.microBatches = x.strategy.micro_batches;
    s.schedule = x.strategy.schedule;
    s.stageBoundaries = x.strategy.stage_boundaries;
    s.recompute = x.strategy.recompute;
    s.tensorDevices = x.strategy.tensor;
    s.log = request.log;
    return s;
}

RunModel buildStrategy(const RunRequest& request, const RunPlan& plan, const engine::Dims& shape, int64_t classes,
                       const std::function<void(const std::string&)>& say) {
    const Experiment& x = request.experiment;
    const Placement& place = plan.place;
    RunModel m;
    // Checked before the model is allocated here: a model that does not fit the device fails now.
    if (plan.devices.emulated) m.deviceMemory = fitOnDevice(x, plan.devices, place.globalBatch, shape, classes);
    m.strategy = engine::makeStrategy(strategySpecFor(request, plan, shape, classes));
    if (plan.devices.emulated)
        say("model: " + std::to_string(m.strategy->model().paramCount()) + " parameters; " +
            std::string(engine::strategyKindName(x.strategy.type)) + " on " + place.devices + " (emulated: " +
            std::to_string(place.replicas) + " replica(s), numerics on " + std::to_string(place.threadsPerReplica) +
            " host thread(s)), global batch " + std::to_string(place.globalBatch));
    else
        say("model: " + std::to_string(m.strategy->model().paramCount()) + " parameters; " + m.strategy->name() + " on " +
            place.devices + " (threads x " +
            (x.strategy.type == engine::StrategyKind::Pipeline ? "stages"
             : x.strategy.type == engine::StrategyKind::Tensor ? "tensor-parallel devices"
                                                                : "replicas") +
            "), global batch " + std::to_string(place.globalBatch));
    return m;
}

}  // namespace trainbench::app
