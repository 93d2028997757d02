#pragma once
// Applies an optimizer to one span of the model's buffers at a time (as backward or the gradient
// exchange finishes it), in the Optimizer phase and timed as an op of that span's size.
#include <cstdint>
#include <map>

#include "engine/model/model.h"
#include "engine/optim/optimizer.h"

namespace trainbench::engine {

class TimedUpdate {
public:
    // Registers one op per gradient span of `model` with the model's device.
    TimedUpdate(Model& model, Optimizer& optimizer);
    // Updates [offset, offset + count) of the model's parameters from its gradients.
    void operator()(int64_t offset, int64_t count, int64_t step);

private:
    prof::OpStat* opFor(int64_t offset, int64_t count);

    Model& model_;
    Optimizer& optimizer_;
    std::map<std::pair<int64_t, int64_t>, prof::OpStat*> ops_;
};

}  // namespace trainbench::engine
