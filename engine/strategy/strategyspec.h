#pragma once
// What a strategy is made from: one typed spec for every kind, filled in by the run path from the
// experiment, the device plan and the job, and turned into a Strategy by makeStrategy
// (strategyfactory.h). The per-strategy constructors take the parts they need.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/modelspec.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/strategy/clusterspec.h"
#include "engine/strategy/strategyconfig.h"
#include "engine/strategy/strategykind.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

// What every replica of a run is built from: the same spec and seed, so all start identical.
struct ReplicaSpec {
    ModelSpec model;
    Dims sampleShape;          // one example: channels, height, width
    int64_t numClasses = 0;
    OptimizerConfig optimizer;
    uint64_t seed = 0;
    int threads = 1;           // compute threads of the replica's device (>= 1)
};

// How synchronous replicas exchange gradients (mirrored, multi_worker).
struct GradientExchange {
    double bucketMb = 1.0;  // reduced in buckets of at least this (0: one per layer)
    bool overlap = true;    // reduce buckets while backward goes on (false: after it)
};

// multi_worker and parameter_server: this process's place in its job.
struct JobSpec {
    ClusterSpec cluster;                         // this task and the others (TF_CONFIG)
    std::string token;                           // checked on every connection of the job
    std::chrono::milliseconds timeout{30'000};   // a peer silent this long is lost
    // multi_worker: Gloo (meeting through the chief's store) or MPI (the ranks mpirun started; the
    // cluster spec's rank is the MPI rank).
    CollectiveBackend collective = CollectiveBackend::Gloo;
};

struct StrategySpec {
    StrategyKind kind = StrategyKind::Single;
    ReplicaSpec replica;
    // mirrored: replicas in this process; multi_worker: ranks of the job; parameter_server: workers;
    // emulated: the virtual clock's replicas (their numerics run here as one pass, see below).
    int replicas = 1;
    // The run is on emulated devices: the replicas of single, mirrored and tpu_pod are the virtual
    // clock's; their numerics run in this process as one pass over the global batch, each replica
    // normalising its own part of it (per-core batch norm). Jobs run their processes for real.
    bool emulated = false;
    GradientExchange exchange;
    std::optional<JobSpec> job;               // multi_worker and parameter_server only
    const std::atomic<bool>* stop = nullptr;  // multi_worker: this process's stop request (may be null)
    // pipeline: stages, micro-batches, schedule, boundaries.
    int stages = 2;
    int microBatches = 4;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    std::vector<int> stageBoundaries;
    bool recompute = false;
    // tensor: devices each dense and convolution layer is split across.
    int tensorDevices = 2;
    std::function<void(const std::string&)> log;  // optional; parameter_server may call it from any thread
};

}  // namespace trainbench::engine
