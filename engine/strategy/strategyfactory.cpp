#include "engine/strategy/strategyfactory.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "engine/util/errors.h"

#include "engine/collective/gloocollective.h"
#include "engine/collective/mpicollective.h"
#include "engine/strategy/mirroredstrategy.h"
#include "engine/strategy/multiworkerstrategy.h"
#include "engine/strategy/parameterserverstrategy.h"
#include "engine/strategy/pipelinestrategy.h"
#include "engine/strategy/tensorstrategy.h"
#include "engine/strategy/tpupodstrategy.h"

namespace trainbench::engine {

namespace {

constexpr std::chrono::milliseconds kArrivalAllowance{60'000};

const JobSpec& jobOf(const StrategySpec& spec) {
    if (!spec.job)
        throw std::invalid_argument(std::string(strategyKindName(spec.kind)) +
                                    " runs as a job of processes and needs this process's task (a cluster spec)");
    return *spec.job;
}

// The numerics of the emulated replicas in one pass over the global batch (StrategySpec::emulated).
std::unique_ptr<Strategy> onePassOverReplicas(const StrategySpec& spec) {
    return std::make_unique<SingleStrategy>(spec.replica, spec.replicas);
}

std::unique_ptr<Strategy> multiWorker(const StrategySpec& spec) {
    const JobSpec& job = jobOf(spec);
    const int rank = job.cluster.rank();
    std::unique_ptr<Collective> collective;
    if (job.collective == CollectiveBackend::Mpi) {
        collective = std::make_unique<MpiCollective>(job.timeout);
        if (collective->size() != spec.replicas || collective->rank() != rank)
            throw CollectiveError("the MPI job has " + std::to_string(collective->size()) + " ranks and this is rank " +
                                  std::to_string(collective->rank()) + ", but the cluster spec has " +
                                  std::to_string(spec.replicas) + " trainers and makes this rank " + std::to_string(rank));
    } else {
        GlooTransport transport;
        transport.hostname = job.cluster.self().host;
        // Ranks start, load their data and build the model at their own pace (seconds apart on a
        // loaded machine): a short strategy.timeout_s is for the steps, not for the slowest start.
        transport.arrivalTimeout = std::max<std::chrono::milliseconds>(job.timeout, kArrivalAllowance);
        collective = std::make_unique<GlooCollective>(rank, spec.replicas, job.cluster.coordinator().text(), job.token,
                                                      job.timeout, transport);
    }
    if (spec.log)
        spec.log("joined the job as rank " + std::to_string(rank) + " of " + std::to_string(spec.replicas) + " (" +
                 std::string(collectiveBackendName(job.collective)) + ")");
    return std::make_unique<MultiWorkerStrategy>(std::move(collective), spec.replica, spec.exchange, spec.stop);
}

std::unique_ptr<Strategy> parameterServer(const StrategySpec& spec) {
    const JobSpec& job = jobOf(spec);
    ParameterServerStrategyConfig c;
    c.listen = job.cluster.self();
    c.token = job.token;
    c.servers = job.cluster.ps;
    c.workers = spec.replicas;
    c.threadsPerWorker = spec.replica.threads;
    c.timeout = job.timeout;
    c.log = spec.log;
    return std::make_unique<ParameterServerStrategy>(std::move(c), spec.replica);
}

}  // namespace

std::unique_ptr<Strategy> makeStrategy(const StrategySpec& spec) {
    switch (spec.kind) {
        case StrategyKind::Single:
            return spec.emulated ? onePassOverReplicas(spec) : std::make_unique<SingleStrategy>(spec.replica);
        case StrategyKind::Mirrored:
            if (spec.emulated) return onePassOverReplicas(spec);
            return std::make_unique<MirroredStrategy>(spec.replica, spec.replicas, spec.exchange);
        case StrategyKind::TpuPod: return makeTpuPodStrategy(spec);
        case StrategyKind::Pipeline:
            return std::make_unique<PipelineStrategy>(
                spec.replica, PipelineSpec{spec.stages, spec.microBatches, spec.schedule, spec.stageBoundaries, spec.recompute});
        case StrategyKind::Tensor: return std::make_unique<TensorStrategy>(spec.replica, spec.tensorDevices);
        case StrategyKind::MultiWorker: return multiWorker(spec);
        case StrategyKind::ParameterServer: return parameterServer(spec);
    }
    throw std::invalid_argument("unknown strategy kind " + std::to_string(static_cast<int>(spec.kind)));
}

}  // namespace trainbench::engine
