#pragma once
// tf.distribute.MirroredStrategy on CPU devices: N replicas in one process, each a device with its
// own thread budget and oneDNN stream, its own copy of the model and of the optimizer state. The
// global batch is split N ways; gradients are summed in shared memory, bucket by bucket while
// backward goes on; every replica applies the same update, so the copies stay identical.
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/model/modelspec.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/strategy/replica.h"
#include "engine/collective/sharedmemorycollective.h"
#include "engine/strategy/strategy.h"
#include "engine/strategy/strategyconfig.h"
#include "engine/strategy/strategyspec.h"

namespace trainbench::engine {

class MirroredStrategy final : public Strategy {
public:
    // Every replica's model is built from the same spec and seed, so they start identical.
    // replicas and spec.threads must be >= 1.
    MirroredStrategy(const ReplicaSpec& spec, int replicas, GradientExchange exchange = {});
    ~MirroredStrategy() override;

    std::string name() const override { return "mirrored"; }
    int replicas() const override { return static_cast<int>(replicas_.size()); }
    std::string devices() const override;
    Model& model() override { return replicas_[0]->replica->model(); }
    Optimizer& optimizer() override { return replicas_[0]->replica->optimizer(); }
    void bindThreads() override { replicas_[0]->replica->device().bindThreads(); }
    void restore(const Checkpoint& checkpoint) override;
    void warmStart(const Checkpoint& checkpoint, const WarmStartOptions& options) override;
    std::vector<prof::OpRow> opStats() override;
    StrategyStep step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                      const std::function<void()>& midpoint) override;

    // Replica r's model (tests compare the copies).
    Model& replicaModel(int r) { return replicas_[static_cast<size_t>(r)]->replica->model(); }
    const std::vector<GradientSync::Bucket>& buckets() const { return replicas_[0]->replica->sync().buckets(); }

private:
    struct Slot {
        std::unique_ptr<SharedMemoryCollective> collective;
        std::unique_ptr<Replica> replica;
        double loss = 0.0;  // of its rows this step
        ReplicaStep record;
        std::exception_ptr error;
    };
    struct Job {
        BatchView batch;
        int64_t step = 0;
        uint64_t seed = 0;
    };
    void runReplica(int r, const Job& job, const std::function<void()>& midpoint);
    void workerLoop(int r);

    std::vector<std::unique_ptr<Slot>> replicas_;
    std::shared_ptr<SharedMemoryGroup> group_;
    std::vector<std::thread> workers_;  // replicas 1..N-1; replica 0 runs on the caller's thread
    std::mutex mutex_;
    std::condition_variable cv_;
    Job job_;
    uint64_t generation_ = 0;  // bumped for every step handed to the workers
    int running_ = 0;          // workers still on the current step
    bool stop_ = false;
};

}  // namespace trainbench::engine
