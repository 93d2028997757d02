#include "engine/strategy/strategy.h"

#include "engine/instrument/instrument.h"

#include <stdexcept>

#include "engine/checkpoint/trainingcheckpoint.h"
#include "engine/layers/softmaxcrossentropy.h"

namespace trainbench::engine {

void Strategy::restore(const Checkpoint& checkpoint) {
    restoreTraining(checkpoint, model().params(), model().paramCount(), optimizer(), model().state());
}

void Strategy::warmStart(const Checkpoint& checkpoint, const WarmStartOptions& options) {
    warmStartFrom(checkpoint, model(), optimizer(), options);
}

void Strategy::dispatch(const BatchView&, int64_t, uint64_t) {
    throw std::logic_error(name() + " is a synchronous strategy: the trainer calls step(), not dispatch()");
}

std::vector<StrategyStep> Strategy::completed(bool) { return {}; }

namespace {

std::unique_ptr<Model> modelOf(const ReplicaSpec& spec, CpuDevice& device, int statisticsShards) {
    auto model = std::make_unique<Model>(spec.model, spec.sampleShape, spec.numClasses, device, spec.seed);
    if (statisticsShards > 1) model->setStatisticsShards(statisticsShards);
    return model;
}

}  // namespace

SingleStrategy::SingleStrategy(const ReplicaSpec& spec, int statisticsShards)
    : ownDevice_(std::make_unique<CpuDevice>(spec.threads)),
      ownModel_(modelOf(spec, *ownDevice_, statisticsShards)),
      ownOptimizer_(Optimizer::create(spec.optimizer, ownModel_->paramCount())),
      model_(*ownModel_),
      optimizer_(*ownOptimizer_),
      update_(model_, optimizer_) {}

std::string SingleStrategy::devices() const { return "cpu:" + std::to_string(model_.device().threads()); }

StrategyStep SingleStrategy::step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                                  const std::function<void()>& midpoint) {
    const int64_t n = batch.count;
    Tensor* logits = nullptr;
    {
        TB_PHASE(Forward);
        logits = &model_.forward(batch.x, n, /*training=*/true, stepSeed);
    }
    if (midpoint) {
        TB_PHASE(Input);  // preparing the next batch on the training thread
        midpoint();
    }
    LossResult r;
    {
        TB_PHASE(Forward);
        if (gradLogits_.empty() || gradLogits_.dims()[0] != n)
            gradLogits_ = Tensor(Tensor::plainDesc({n, model_.numClasses()}), model_.device().engine());
        model_.device().stream().wait();
        r = SoftmaxCrossEntropy::compute(*logits, batch.y, &gradLogits_);
    }
    {
        TB_PHASE(Backward);
        model_.backward(gradLogits_, [&](int64_t offset, int64_t count) { update_(offset, count, step); });
    }
    StrategyStep out;
    out.loss = r.loss;
    return out;
}

}  // namespace trainbench::engine
