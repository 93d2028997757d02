#include "engine/layers/flatten.h"

#include <functional>
#include <numeric>

namespace trainbench::engine {

Flatten::Flatten(CpuDevice& device, Dims sampleShape) : Layer(device, std::move(sampleShape)) {
    out_ = {std::accumulate(in_.begin(), in_.end(), int64_t{1}, std::multiplies<>())};
}

std::string Flatten::describe() const { return "Flatten(" + std::to_string(out_[0]) + ")"; }

Tensor& Flatten::forward(Tensor& input, bool /*training*/) {
    lastInput_ = &input;
    Tensor& plain = toPlain_.convert(input, Tensor::plainDesc(input.dims()), device_);
    const int64_t batch = batchOf(input);
    auto md = Tensor::plainDesc({batch, out_[0]});
    if (outputView_.empty() || outputView_.data() != plain.data() || !(outputView_.desc() == md))
        outputView_ = Tensor(md, device_.engine(), plain.data());
    return outputView_;
}

Tensor* Flatten::backward(Tensor& gradOutput) {
    if (!needsInputGrad_) return nullptr;
    auto md = Tensor::plainDesc(lastInput_->dims());
    if (gradView_.empty() || gradView_.data() != gradOutput.data() || !(gradView_.desc() == md))
        gradView_ = Tensor(md, device_.engine(), gradOutput.data());
    return &toInputLayout_.convert(gradView_, lastInput_->desc(), device_);
}

void Flatten::describeOps(int64_t, bool, std::vector<OpDesc>&) const {
    // A view of its input: only a layout reorder, which describeOps leaves out.
}

}  // namespace trainbench::engine
