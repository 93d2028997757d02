#include "engine/strategy/strategy.h"

#include <stdexcept>

#include "engine/checkpoint/trainingcheckpoint.h"
#include "engine/layers/softmaxcrossentropy.h"

namespace trainbench::engine {

void Strategy::restore(const Checkpoint& checkpoint) {
    restoreTraining(checkpoint, model().params(), model().paramCount(), optimizer());
}

void Strategy::dispatch(const BatchView&, int64_t, uint64_t) {
    throw std::logic_error(name() + " is a synchronous strategy: the trainer calls step(), not dispatch()");
}

std::vector<StrategyStep> Strategy::completed(bool) { return {}; }

std::string SingleStrategy::devices() const { return "cpu:" + std::to_string(model_.device().threads()); }

StrategyStep SingleStrategy::step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                                  const std::function<void()>& midpoint) {
    const int64_t n = batch.count;
    Tensor& logits = model_.forward(batch.x, n, /*training=*/true, stepSeed);
    if (midpoint) midpoint();
    if (gradLogits_.empty() || gradLogits_.dims()[0] != n)
        gradLogits_ = Tensor(Tensor::plainDesc({n, model_.numClasses()}), model_.device().engine());
    model_.device().stream().wait();
    const LossResult r = SoftmaxCrossEntropy::compute(logits, batch.y, &gradLogits_);
    model_.backward(gradLogits_, [&](int64_t offset, int64_t count) {
        optimizer_.update(model_.params(), model_.grads(), offset, offset + count, step);
    });
    StrategyStep out;
    out.loss = r.loss;
    return out;
}

}  // namespace trainbench::engine
