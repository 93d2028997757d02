#pragma once
// tf.distribute.experimental.ParameterServerStrategy: asynchronous training over three kinds of
// process. K parameter servers hold the variables (sharded by size) and apply each pushed gradient
// as it arrives; W workers pull the current values, compute a gradient on their batch and push it;
// the coordinator in the chief (PsCoordinator, driven by this class) hands every step's batch to a
// free worker and takes the results; this class evaluates and checkpoints. Nothing waits for a
// slow worker; the price is staleness: a gradient computed on values that other pushes have since
// changed (recorded per update).
//
// The coordinator sends the workers and the servers a heartbeat when it has nothing else to say, so
// that they can give up on a coordinator that stopped. A worker that dies (its connection drops) or
// falls silent (no heartbeat for the timeout) loses its step to another worker: at-least-once, so a step whose gradient had reached some servers
// before the worker died is applied there twice. Rescheduled steps are counted. A parameter server
// that fails ends the job at once with an error naming it (the variables it held are gone); the
// job restarts from the last checkpoint.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/model/modelspec.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/strategy/clusterspec.h"
#include "engine/strategy/pscoordinator.h"
#include "engine/strategy/strategy.h"

namespace trainbench::engine {

struct ParameterServerStrategyConfig {
    HostPort listen;                     // where workers reach the coordinator (the chief's address)
    std::string token;                   // the job's token: checked on every connection
    std::vector<HostPort> servers;       // the parameter servers, by index
    int workers = 1;                     // workers in the cluster spec (more may join, fewer may live)
    int threadsPerWorker = 1;            // what each worker computes with (for devices())
    std::chrono::milliseconds timeout{30'000};  // a worker or server silent this long is lost
    std::function<void(const std::string&)> log;  // what happens to workers; may be called from any thread
};

class ParameterServerStrategy final : public Strategy {
public:
    // Starts listening for workers at once (they may connect before the first step). The model here
    // is for evaluation and checkpoints; its initial parameters are what the servers start from.
    // Throws ConnectionError if it cannot listen on config.listen.
    ParameterServerStrategy(ParameterServerStrategyConfig config, int threads, const ModelSpec& spec,
                            const Dims& sampleShape, int64_t numClasses, const OptimizerConfig& optimizer,
                            uint64_t seed);
    ~ParameterServerStrategy() override;

    std::string name() const override { return "parameter_server"; }
    int replicas() const override;
    std::string devices() const override;
    Model& model() override;
    Optimizer& optimizer() override;
    void bindThreads() override;
    void restore(const Checkpoint& checkpoint) override;
    // Into the coordinator's model, which the parameter servers are given at the first step; a
    // carried optimizer state goes to them too, with its count of updates.
    void warmStart(const Checkpoint& checkpoint, const WarmStartOptions& options) override;
    StrategyStep step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                      const std::function<void()>& midpoint) override;

    bool asynchronous() const override { return true; }
    void dispatch(const BatchView& batch, int64_t step, uint64_t stepSeed) override;
    std::vector<StrategyStep> completed(bool all) override;
    void fetchState(bool optimizerToo) override;
    void finish() override;

    ParameterServerStats stats() const;
    uint16_t port() const;  // the coordinator's listening port

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine
