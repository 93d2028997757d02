#include "engine/strategy/mirroredstrategy.h"

#include "engine/instrument/instrument.h"

#include <stdexcept>
#include <string>

#include "engine/checkpoint/trainingcheckpoint.h"
#include "engine/util/rng.h"
#include "engine/util/threadname.h"

namespace trainbench::engine {

MirroredStrategy::MirroredStrategy(const ReplicaSpec& spec, int replicas, GradientExchange exchange) {
    if (replicas < 1) throw std::invalid_argument("mirrored needs at least one replica, got " + std::to_string(replicas));
    if (spec.threads < 1)
        throw std::invalid_argument("mirrored needs at least one thread per replica, got " +
                                    std::to_string(spec.threads));
    group_ = std::make_shared<SharedMemoryGroup>(replicas);
    for (int r = 0; r < replicas; ++r) {
        auto slot = std::make_unique<Slot>();
        slot->collective = std::make_unique<SharedMemoryCollective>(group_, r);
        slot->replica = std::make_unique<Replica>(spec.threads, spec.model, spec.sampleShape, spec.numClasses,
                                                  spec.optimizer, spec.seed, *slot->collective, exchange.bucketMb,
                                                  exchange.overlap);
        replicas_.push_back(std::move(slot));
    }
    for (int r = 1; r < replicas; ++r) workers_.emplace_back([this, r] { workerLoop(r); });
}

MirroredStrategy::~MirroredStrategy() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
}

std::string MirroredStrategy::devices() const {
    return "cpu:" + std::to_string(replicas_[0]->replica->device().threads()) + "x" + std::to_string(replicas_.size());
}

void MirroredStrategy::restore(const Checkpoint& checkpoint) {
    for (auto& slot : replicas_) {
        Replica& r = *slot->replica;
        restoreTraining(checkpoint, r.model().params(), r.model().paramCount(), r.optimizer(), r.model().state());
    }
}

void MirroredStrategy::warmStart(const Checkpoint& checkpoint, const WarmStartOptions& options) {
    for (auto& slot : replicas_) warmStartFrom(checkpoint, slot->replica->model(), slot->replica->optimizer(), options);
}

void MirroredStrategy::workerLoop(int r) {
    const std::string name = "tb-replica" + std::to_string(r);
    setThreadName(name.c_str());
    replicas_[static_cast<size_t>(r)]->replica->device().bindThreads();
    uint64_t seen = 0;
    for (;;) {
        Job job;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
        }
        runReplica(r, job, {});
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --running_;
        }
        cv_.notify_all();
    }
}

void MirroredStrategy::runReplica(int r, const Job& job, const std::function<void()>& midpoint) {
    Slot& slot = *replicas_[static_cast<size_t>(r)];
    slot.error = nullptr;
    try {
        // Replica 0 draws the dropout masks a single device would; the others their own.
        const uint64_t seed = r == 0 ? job.seed : deriveSeed(job.seed, kSeedReplica, static_cast<uint64_t>(r));
        slot.record = slot.replica->step(r, static_cast<int>(replicas_.size()), job.batch, job.step, seed, midpoint,
                                         slot.loss);
    } catch (...) {
        slot.error = std::current_exception();
    }
}

std::vector<prof::OpRow> MirroredStrategy::opStats() {
    std::vector<std::vector<prof::OpRow>> perReplica;
    for (auto& slot : replicas_) perReplica.push_back(slot->replica->device().ops().snapshot());
    return prof::mergeOpRows(perReplica);
}

StrategyStep MirroredStrategy::step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                                    const std::function<void()>& midpoint) {
    const Job job{batch, step, stepSeed};
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = job;
        running_ = static_cast<int>(workers_.size());
        ++generation_;
    }
    cv_.notify_all();
    runReplica(0, job, midpoint);
    {
        TB_PHASE(Communication);  // replica 0 waiting for the others to finish the step
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return running_ == 0; });
    }
    StrategyStep out;
    double lossSum = 0.0;
    for (auto& rep : replicas_) {
        if (rep->error) std::rethrow_exception(rep->error);
        lossSum += rep->loss * static_cast<double>(rep->record.samples);
        out.comm_seconds += rep->record.comm_seconds;
        out.wait_seconds += rep->record.wait_seconds;
        out.replicas.push_back(rep->record);
    }
    const double N = static_cast<double>(replicas_.size());
    out.loss = batch.count > 0 ? lossSum / static_cast<double>(batch.count) : 0.0;
    out.comm_seconds /= N;
    out.wait_seconds /= N;
    return out;
}

}  // namespace trainbench::engine
