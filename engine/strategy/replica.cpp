#include "engine/strategy/replica.h"

#include "engine/instrument/instrument.h"

#include <algorithm>
#include <chrono>

#include "engine/layers/softmaxcrossentropy.h"
#include "engine/telemetry/stepphases.h"
#include "engine/util/elapsed.h"

namespace trainbench::engine {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

Replica::Replica(int threads, const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses,
                 const OptimizerConfig& optimizer, uint64_t seed, Collective& collective, double bucketMb, bool overlap)
    : device_(std::make_unique<CpuDevice>(threads)),
      model_(std::make_unique<Model>(spec, sampleShape, numClasses, *device_, seed)),
      optimizer_(Optimizer::create(optimizer, model_->paramCount())),
      update_(std::make_unique<TimedUpdate>(*model_, *optimizer_)) {
    for (int64_t d : sampleShape) exampleSize_ *= d;
    const size_t bucketBytes = static_cast<size_t>(std::max(0.0, bucketMb) * 1024 * 1024);
    sync_ = std::make_unique<GradientSync>(collective, model_->grads(), model_->gradientSpans(), bucketBytes, overlap);
}

ReplicaStep Replica::step(int rank, int replicas, const BatchView& batch, int64_t step, uint64_t dropoutSeed,
                          const std::function<void()>& midpoint, double& localLoss) {
    const auto t0 = Clock::now();
    // This replica's phases: the difference of two peeks (replica 0 of a mirrored run shares the
    // training thread, whose step the trainer takes as a whole).
    const prof::PhaseTimes phasesBefore = prof::peekPhases();
    const int64_t n = batch.count;
    const int64_t lo = n * rank / replicas, hi = n * (rank + 1) / replicas, rows = hi - lo;
    Model& model = *model_;
    localLoss = 0.0;
    try {
        sync_->beginStep();
        if (rows > 0) {
            Tensor* logits = nullptr;
            {
                TB_PHASE(Forward);
                logits = &model.forward(batch.x + lo * exampleSize_, rows, /*training=*/true, dropoutSeed);
            }
            if (midpoint) {
                TB_PHASE(Input);
                midpoint();
            }
            {
                TB_PHASE(Forward);
                if (gradLogits_.empty() || gradLogits_.dims()[0] != rows)
                    gradLogits_ = Tensor(Tensor::plainDesc({rows, model.numClasses()}), model.device().engine());
                model.device().stream().wait();
                // The gradient of the global batch's mean loss: summed over replicas, it is what one
                // device computes on the whole batch.
                localLoss = SoftmaxCrossEntropy::compute(*logits, batch.y + lo, &gradLogits_, n).loss;
            }
            TB_PHASE(Backward);
            model.backward(gradLogits_, [&](int64_t offset, int64_t count) { sync_->spanReady(offset, count); });
        } else {
            // Fewer examples than replicas (a last, short batch): this one adds nothing to the sum.
            if (midpoint) {
                TB_PHASE(Input);
                midpoint();
            }
            std::fill(model.grads(), model.grads() + model.paramCount(), 0.0f);
            sync_->allReady();
        }
    } catch (...) {
        // The others are reducing with this replica: take part with zeros so that none of them waits
        // for it forever, then report the failure.
        try {
            std::fill(model.grads(), model.grads() + model.paramCount(), 0.0f);
            sync_->allReady();
            sync_->finish({});
        } catch (...) {
        }
        throw;
    }
    TimedUpdate& update = *update_;
    const double blocked = sync_->finish([&](int64_t offset, int64_t count) { update(offset, count, step); });
    const prof::PhaseTimes phases = prof::peekPhases() - phasesBefore;
    ReplicaStep r;
    r.rank = rank;
    r.samples = rows;
    r.compute_seconds = std::max(0.0, secondsSince(t0) - blocked);
    r.comm_seconds = sync_->commSeconds();
    r.wait_seconds = sync_->peerWaitSeconds();
    for (const StepPhase& p : kStepPhases)
        if (p.perReplica) r.*p.seconds = phases[p.phase];
    return r;
}

}  // namespace trainbench::engine
