#include "engine/layers/dropout.h"

#include <sstream>

#include "engine/layers/opcosts.h"

namespace trainbench::engine {

Dropout::Dropout(CpuDevice& device, Dims sampleShape, float rate)
    : Layer(device, std::move(sampleShape)), rate_(rate) {
    out_ = in_;
}

std::string Dropout::describe() const {
    std::ostringstream s;
    s << "Dropout(" << rate_ << ")";
    return s.str();
}

Dropout::Ops& Dropout::opsFor(const Tensor& t) {
    auto it = ops_.find(batchOf(t));
    if (it != ops_.end()) return it->second;
    Ops o;
    // Forward reads x, writes x and the mask; backward reads the gradient and the mask, writes it.
    o.fwd = addOp(opcost::elementwise("dropout_forward", t.dims(), 3, 2.0));
    o.bwd = addOp(opcost::elementwise("dropout_backward", t.dims(), 3, 1.0));
    return ops_.emplace(batchOf(t), o).first->second;
}

Tensor& Dropout::forward(Tensor& input, bool training) {
    if (!training || rate_ <= 0.0f) return input;
    current_ = &opsFor(input);
    prof::OpTimer timer(current_->fwd);
    // Elementwise over the whole buffer, so any (blocked) layout works; padding stays zero.
    const size_t n = input.desc().get_size() / sizeof(float);
    if (mask_.size() < n) mask_ = AlignedBuffer(n);
    Rng rng(stepSeed_);
    const float keep = 1.0f - rate_, scale = 1.0f / keep;
    float* m = mask_.data();
    float* x = input.data();
    for (size_t i = 0; i < n; ++i) {
        m[i] = rng.uniform() < keep ? scale : 0.0f;
        x[i] *= m[i];
    }
    return input;
}

Tensor* Dropout::backward(Tensor& gradOutput) {
    if (rate_ <= 0.0f) return &gradOutput;
    prof::OpTimer timer(current_ ? current_->bwd : nullptr);
    const size_t n = gradOutput.desc().get_size() / sizeof(float);
    float* g = gradOutput.data();
    const float* m = mask_.data();
    for (size_t i = 0; i < n; ++i) g[i] *= m[i];
    return &gradOutput;
}

void Dropout::describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const {
    if (!training || rate_ <= 0.0f) return;
    const Dims d = batchDims(batch, in_);
    out.push_back(describedOp(opcost::elementwise("dropout_forward", d, 3, 2.0), StepPart::Forward));
    out.push_back(describedOp(opcost::elementwise("dropout_backward", d, 3, 1.0), StepPart::Backward));
}

}  // namespace trainbench::engine
