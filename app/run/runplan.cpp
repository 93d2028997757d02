#include "app/run/runplan.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace trainbench::app {

namespace {

Placement placementFor(const Experiment& x, const std::optional<engine::ClusterSpec>& cluster,
                       const DevicePlan& devices) {
    Placement p;
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = x.train.threads > 0 ? x.train.threads : cores;
    const bool async = x.strategy.type == engine::StrategyKind::ParameterServer;
    const bool job = engine::isMultiProcess(x.strategy.type);
    if (x.strategy.type == engine::StrategyKind::Pipeline || x.strategy.type == engine::StrategyKind::Tensor) {
        const bool pipeline = x.strategy.type == engine::StrategyKind::Pipeline;
        const std::string kind(engine::strategyKindName(x.strategy.type));
        if (devices.emulated && !pipeline)
            throw std::invalid_argument("strategy.type '" + kind + "' trains on this host's CPU (device.type 'cpu'); "
                                        "its devices on emulated devices (" + x.device.type + ") are not modelled yet");
        // One data-parallel replica; each stage (or tensor device) a device of threads_per_replica
        // threads (or the threads split evenly).
        const int parts = pipeline ? x.strategy.stages : x.strategy.tensor;
        p.replicas = 1;
        p.threadsPerReplica = x.strategy.threads_per_replica > 0 ? x.strategy.threads_per_replica
                                                                : std::max(1, threads / parts);
        p.globalBatch = x.train.batch_size;
        // Emulated: the stages' numerics run here on threads; the virtual clock charges the GPUs.
        p.devices = devices.emulated ? devices.devices : "cpu:" + std::to_string(p.threadsPerReplica) + "x" + std::to_string(parts);
        return p;
    }
    if (devices.emulated && !job) {
        // The numerics of every emulated replica run here as one pass over the global batch, on
        // every thread; the replicas are the virtual clock's.
        p.replicas = devices.replicas;
        p.threadsPerReplica = threads;
        p.globalBatch = x.strategy.batch_scope == engine::BatchScope::PerReplica ? x.train.batch_size * p.replicas : x.train.batch_size;
        p.devices = devices.devices;
        return p;
    }
    // A job's processes run here for real (an emulated job's each stand for one worker's device).
    const bool replicated = x.strategy.type == engine::StrategyKind::Mirrored || job;
    // parameter_server: the workers in the cluster spec (the chief only coordinates).
    p.replicas = !replicated ? 1
                 : cluster   ? (async ? static_cast<int>(cluster->worker.size()) : cluster->trainers())
                             : x.strategy.replicas;
    p.replicas = std::max(p.replicas, 1);
    p.threadsPerReplica = x.strategy.threads_per_replica > 0 ? x.strategy.threads_per_replica
                                                            : std::max(1, threads / p.replicas);
    if (async)  // every step is one worker's batch: the per-replica batch
        p.globalBatch = x.strategy.batch_scope == engine::BatchScope::PerReplica ? x.train.batch_size
                                                                : std::max<int64_t>(1, x.train.batch_size / p.replicas);
    else
        p.globalBatch = x.strategy.batch_scope == engine::BatchScope::PerReplica ? x.train.batch_size * p.replicas : x.train.batch_size;
    p.devices = devices.emulated ? devices.devices
                                 : "cpu:" + std::to_string(p.threadsPerReplica) + (replicated ? "x" + std::to_string(p.replicas) : "");
    return p;
}

}  // namespace

RunPlan planRun(const Experiment& x, const std::optional<engine::ClusterSpec>& cluster,
                const HostCalibrator& calibrate) {
    const bool parameterServer = x.strategy.type == engine::StrategyKind::ParameterServer;
    if (engine::isMultiProcess(x.strategy.type) && !cluster)
        throw std::invalid_argument("a " + std::string(engine::strategyKindName(x.strategy.type)) + " experiment runs as a job of processes: start it with "
                                    "`trainbench-cli run`, or each task with `trainbench-cli worker` and TF_CONFIG");
    const int jobWorkers = !cluster ? 0
                           : parameterServer ? static_cast<int>(cluster->worker.size())
                                             : cluster->trainers();
    RunPlan plan;
    plan.devices = planDevices(x, calibrate, jobWorkers,
                               parameterServer && cluster ? static_cast<int>(cluster->ps.size()) : 0);
    plan.place = placementFor(x, cluster, plan.devices);
    return plan;
}

}  // namespace trainbench::app
