#pragma once
// How training is spread over replicas: the experiment's "strategy" section.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/pipelineschedule.h"
#include "engine/strategy/strategykind.h"

namespace trainbench::engine {

// What train.batch_size counts (strategy.batch_scope).
enum class BatchScope {
    Global,      // the global batch, split over the replicas
    PerReplica,  // each replica's batch: the global batch is batch_size x replicas
};
// The experiment file's text: "global", "per_replica".
constexpr std::string_view batchScopeName(BatchScope s) { return s == BatchScope::Global ? "global" : "per_replica"; }
constexpr std::optional<BatchScope> parseBatchScope(std::string_view name) {
    if (name == "global") return BatchScope::Global;
    if (name == "per_replica") return BatchScope::PerReplica;
    return std::nullopt;
}

// How the processes of a multi_worker job exchange gradients (strategy.collective).
enum class CollectiveBackend {
    Gloo,  // Gloo's ring over TCP; the tasks meet through the chief's rendezvous store (TF_CONFIG)
    Mpi,   // Open MPI, the processes started by mpirun (shared memory on one host)
};
constexpr std::string_view collectiveBackendName(CollectiveBackend b) { return b == CollectiveBackend::Gloo ? "gloo" : "mpi"; }
constexpr std::optional<CollectiveBackend> parseCollectiveBackend(std::string_view name) {
    if (name == "gloo") return CollectiveBackend::Gloo;
    if (name == "mpi") return CollectiveBackend::Mpi;
    return std::nullopt;
}

struct StrategyConfig {
    StrategyKind type = StrategyKind::Single;  // the file's "single", "mirrored", ...: parsed once, at loading
    std::string slice;             // tpu_pod: the TPU slice, e.g. "v3-32" (its replicas: the slice's cores)
    int replicas = 1;              // mirrored: replicas in this process; multi_worker, parameter_server: worker processes
    int parameter_servers = 1;     // parameter_server: processes holding the variables
    int threads_per_replica = 0;   // compute threads of each replica (0: train.threads split evenly)
    BatchScope batch_scope = BatchScope::Global;
    double bucket_mb = 1.0;        // gradients are reduced in buckets of at least this (0: one per layer)
    bool overlap = true;           // reduce buckets while backward goes on (false: after it)
    CollectiveBackend collective = CollectiveBackend::Gloo;  // multi_worker: Gloo over TCP, or Open MPI
    // pipeline: the model cut into `stages` stages, the global batch into `micro_batches`, run in
    // `schedule`'s order; `stage_boundaries` (where stages 1.. begin in the layer list) or balanced.
    int stages = 2;
    int micro_batches = 4;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    std::vector<int> stage_boundaries;
    bool recompute = false;        // pipeline: activation recomputation (keep stage inputs, run forward again)
    // tensor: the devices every dense and convolution layer is split across (Megatron-style).
    int tensor = 2;
    double timeout_s = 30.0;       // multi-process: a peer silent this long is lost (a dead socket fails sooner)
    int max_restarts = 3;          // multi-process: restarts from the last checkpoint before the job fails
};

}  // namespace trainbench::engine
