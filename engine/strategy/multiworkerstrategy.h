#pragma once
// tf.distribute.MultiWorkerMirroredStrategy: one replica per process, N processes (on this machine
// or several), synchronous; gradients summed with Gloo's ring all-reduce, bucketed and overlapped
// with backward. Every process reads the same global batches (same seed) and trains on its share of
// the rows, so the job follows one device's loss curve on the global batch.
//
// After each step the ranks swap their step records (a small all-reduce), so the chief can store
// every rank's breakdown and every rank agrees on the loss and on whether to stop.
#include <atomic>
#include <memory>

#include "engine/strategy/replica.h"
#include "engine/strategy/strategy.h"
#include "engine/strategy/strategyspec.h"

namespace trainbench::engine {

class MultiWorkerStrategy final : public Strategy {
public:
    // `collective` joins this process to the job's group; rank 0 broadcasts its initial parameters
    // so that every rank starts from the same ones. `stop` (may be null) is this process's stop
    // request: when any rank has it set after a step, every rank stops after that step.
    MultiWorkerStrategy(std::unique_ptr<Collective> collective, const ReplicaSpec& spec, GradientExchange exchange = {},
                        const std::atomic<bool>* stop = nullptr);
    ~MultiWorkerStrategy() override;

    std::string name() const override { return "multi_worker"; }
    int replicas() const override { return collective_->size(); }
    int rank() const { return collective_->rank(); }
    std::string devices() const override;
    Model& model() override { return replica_->model(); }
    Optimizer& optimizer() override { return replica_->optimizer(); }
    void bindThreads() override { replica_->device().bindThreads(); }
    // Throws CollectiveError naming the step when a peer fails or times out.
    StrategyStep step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                      const std::function<void()>& midpoint) override;

private:
    std::unique_ptr<Collective> collective_;
    std::unique_ptr<Replica> replica_;
    const std::atomic<bool>* stop_;
    std::vector<float> exchange_;  // per rank: samples, compute, comm, wait, loss x rows, stop
};

}  // namespace trainbench::engine
