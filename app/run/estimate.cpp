#include "app/run/estimate.h"

#include <algorithm>
#include <stdexcept>

#include "app/run/deviceplan.h"
#include "app/run/emulatedrun.h"
#include "engine/data/datasubset.h"
#include "engine/data/pipeline/datasource.h"
#include "engine/emulation/opgraph.h"

namespace trainbench::app {

DataShape dataShapeOf(const Experiment& x) {
    if (x.data.dataset == "shape") {
        const engine::ShapeOnlyData& s = x.data.shape;
        // As a run would take them: the first train_limit examples, then data.fraction of those.
        const int64_t limited = x.data.train_limit > 0 ? std::min(x.data.train_limit, s.train_examples) : s.train_examples;
        const engine::Dims sample = s.sequence > 0 ? engine::Dims{s.sequence} : engine::Dims{s.channels, s.height, s.width};
        return {sample, s.classes, std::max<int64_t>(1, engine::subsetSize(limited, x.data.fraction))};
    }
    engine::TrainingData d = engine::openTrainingData(x.data, x.train.batch_size, x.train.seed);
    DataShape out{{d.channels, d.height, d.width}, d.num_classes, d.train->examplesPerEpoch()};
    return out;
}

Estimate estimateExperiment(const Experiment& x, const DataShape& data, const HostCalibrator& calibrate,
                            const std::string& storePath) {
    if (!x.device.emulated())
        throw std::invalid_argument("device.type is 'cpu': estimate times an emulated device (set device.type to a "
                                    "device of the catalog, e.g. 'a100-sxm4-40gb' or 'tpu-v3'); run it to measure this host");
    const DevicePlan plan = planDevices(x, calibrate);
    Estimate e;
    e.devices = plan.devices;
    e.replica_label = plan.spec.replicaLabel();
    e.replicas = plan.replicas;
    e.matrix_units = plan.spec.kind != engine::DeviceKind::Cpu;
    e.device_count = plan.device_count;
    const bool async = plan.parameter_servers > 0;
    const int64_t batch = x.train.batch_size;
    // parameter_server: a step is one worker's batch (as a run places it).
    e.global_batch = x.strategy.batch_scope == engine::BatchScope::PerReplica ? (async ? batch : batch * plan.replicas)
                     : async ? std::max<int64_t>(1, batch / plan.replicas)
                             : batch;
    e.replica_batch = plan.replicaBatch(e.global_batch);
    engine::OpGraph graph = engine::trainingStepGraph(x.model, data.sample, data.classes, e.replica_batch, x.optimizer);
    if (async) graph.optimizer_bytes = 0.0;  // the optimizer state is on the servers
    e.memory = plan.pipeline_link ? memoryOnDevice(x, plan, e.global_batch, data.sample, data.classes)
                                  : engine::checkMemory(graph, plan.spec, plan.precision);
    if (!e.memory.fits || e.memory.near_capacity)
        e.splits = pipelineSplitsThatFit(x, plan, e.global_batch, data.sample, data.classes);
    for (const engine::OpDesc& op : graph.ops) e.flops_per_step += op.cost.flops * static_cast<double>(op.calls);
    // Infeed pinned or none: the estimate has no host pipeline of the devices' hosts to measure. This
    // host as the device is the exception: its pipeline is here, so its rate is taken as a run takes
    // it (the store's, measured by whichever needed it first).
    double infeed = x.device.infeed_seconds_per_batch;
    if (plan.host_pipeline && !(infeed > 0) && x.data.dataset != "shape" && !storePath.empty())
        infeed = infeedOf(x, plan.network ? e.replica_batch : e.global_batch, storePath).seconds_per_batch;
    if (async) {
        engine::ParameterServerClock clock(parameterServerClockConfig(plan, x, infeed),
                                           x.model, data.sample, data.classes, x.optimizer);
        e.parameter_servers = clock.stepCost(e.global_batch);
        e.step = e.parameter_servers->jobStep();
    } else {
        engine::VirtualClock clock(virtualClockConfig(plan, x, infeed), x.model, data.sample,
                                   data.classes, x.optimizer);
        e.step = clock.stepCost(e.global_batch);
    }
    e.samples_per_second = static_cast<double>(e.global_batch) / e.step.seconds();
    const int64_t examples = x.data.train_limit > 0 ? std::min(x.data.train_limit, data.train_examples) : data.train_examples;
    // The data set repeated for the epochs, then batched with the remainder dropped (static shapes,
    // as a TPU input pipeline does it): every example is seen `epochs` times but for the last batch.
    const int64_t epochSteps = x.train.epochs * examples / e.global_batch;
    e.steps = x.train.max_steps > 0 && (x.train.epochs == 0 || x.train.max_steps < epochSteps) ? x.train.max_steps
                                                                                               : epochSteps;
    e.train_seconds = static_cast<double>(e.steps) * e.step.seconds();
    e.price_per_device_hour = plan.price_per_device_hour;
    if (plan.price_per_device_hour)
        e.cost = static_cast<double>(plan.device_count) * *plan.price_per_device_hour * e.train_seconds / 3600.0;
    return e;
}

}  // namespace trainbench::app
