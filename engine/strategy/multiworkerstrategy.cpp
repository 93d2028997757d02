#include "engine/strategy/multiworkerstrategy.h"

#include "engine/instrument/instrument.h"
#include "engine/emulation/virtualclock.h"

#include <algorithm>
#include <string>

#include "engine/telemetry/stepphases.h"
#include "engine/util/errors.h"
#include "engine/util/rng.h"

namespace trainbench::engine {

namespace {
// samples, compute, comm, wait, loss x rows, stop, then the phases measured per replica
constexpr size_t kPhaseField = 6;
constexpr size_t kFields = kPhaseField + kPerReplicaPhaseCount;
static_assert(kFields == static_cast<size_t>(kRecordFloats), "the emulator charges this exchange by its size");
}

MultiWorkerStrategy::MultiWorkerStrategy(std::unique_ptr<Collective> collective, const ReplicaSpec& spec,
                                         GradientExchange exchange, const std::atomic<bool>* stop)
    : collective_(std::move(collective)), stop_(stop) {
    replica_ = std::make_unique<Replica>(spec.threads, spec.model, spec.sampleShape, spec.numClasses, spec.optimizer,
                                         spec.seed, *collective_, exchange.bucketMb, exchange.overlap);
    exchange_.resize(kFields * static_cast<size_t>(collective_->size()));
    Model& m = replica_->model();
    collective_->broadcast(m.params(), static_cast<size_t>(m.paramCount()), 0);
}

MultiWorkerStrategy::~MultiWorkerStrategy() = default;

std::string MultiWorkerStrategy::devices() const {
    return "cpu:" + std::to_string(replica_->device().threads()) + "x" + std::to_string(collective_->size());
}

StrategyStep MultiWorkerStrategy::step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                                       const std::function<void()>& midpoint) {
    const int r = collective_->rank(), n = collective_->size();
    try {
        const uint64_t seed = r == 0 ? stepSeed : deriveSeed(stepSeed, kSeedReplica, static_cast<uint64_t>(r));
        double loss = 0.0;
        const ReplicaStep mine = replica_->step(r, n, batch, step, seed, midpoint, loss);
        // Every rank's record, so the chief can store them and all agree on the loss and on stopping.
        std::fill(exchange_.begin(), exchange_.end(), 0.0f);
        float* slot = exchange_.data() + kFields * static_cast<size_t>(r);
        slot[0] = static_cast<float>(mine.samples);
        slot[1] = static_cast<float>(mine.compute_seconds);
        slot[2] = static_cast<float>(mine.comm_seconds);
        slot[3] = static_cast<float>(mine.wait_seconds);
        slot[4] = static_cast<float>(loss * static_cast<double>(mine.samples));
        slot[5] = stop_ && stop_->load(std::memory_order_relaxed) ? 1.0f : 0.0f;
        size_t field = kPhaseField;
        for (const StepPhase& p : kStepPhases)
            if (p.perReplica) slot[field++] = static_cast<float>(mine.*p.seconds);
        TB_PHASE(Communication);  // the step's records and stop flag: an all-reduce like the gradients'
        collective_->allReduceSum(exchange_.data(), exchange_.size());
    } catch (const CollectiveError& e) {
        throw CollectiveError("step " + std::to_string(step) + ": " + e.what());
    }
    StrategyStep out;
    double lossSum = 0.0;
    for (int k = 0; k < n; ++k) {
        const float* slot = exchange_.data() + kFields * static_cast<size_t>(k);
        ReplicaStep rec;
        rec.rank = k;
        rec.samples = static_cast<int64_t>(slot[0]);
        rec.compute_seconds = slot[1];
        rec.comm_seconds = slot[2];
        rec.wait_seconds = slot[3];
        size_t field = kPhaseField;
        for (const StepPhase& p : kStepPhases)
            if (p.perReplica) rec.*p.seconds = slot[field++];
        lossSum += slot[4];
        out.stop_requested = out.stop_requested || slot[5] > 0.0f;
        out.comm_seconds += rec.comm_seconds / n;
        out.wait_seconds += rec.wait_seconds / n;
        out.replicas.push_back(rec);
    }
    out.loss = batch.count > 0 ? lossSum / static_cast<double>(batch.count) : 0.0;
    return out;
}

}  // namespace trainbench::engine
