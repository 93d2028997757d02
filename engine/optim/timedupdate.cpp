#include "engine/optim/timedupdate.h"

#include "engine/layers/opcosts.h"

namespace trainbench::engine {

TimedUpdate::TimedUpdate(Model& model, Optimizer& optimizer) : model_(model), optimizer_(optimizer) {
    for (auto [offset, count] : model.gradientSpans()) opFor(offset, count);
}

prof::OpStat* TimedUpdate::opFor(int64_t offset, int64_t count) {
    auto key = std::make_pair(offset, count);
    auto it = ops_.find(key);
    if (it != ops_.end()) return it->second;
    // A span of another size (a gradient bucket spanning several layers): registered on first use.
    prof::OpStat* op = model_.device().ops().add(opcost::optimizerUpdate(
        optimizer_.updateKind(), count, optimizer_.flopsPerParam(), optimizer_.bytesPerParam()));
    return ops_.emplace(key, op).first->second;
}

void TimedUpdate::operator()(int64_t offset, int64_t count, int64_t step) {
    TB_PHASE(Optimizer);
    prof::OpTimer timer(opFor(offset, count));
    optimizer_.update(model_.params(), model_.grads(), offset, offset + count, step);
}

}  // namespace trainbench::engine
