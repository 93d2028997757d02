#include "engine/layers/dense.h"

#include <cmath>
#include <functional>
#include <numeric>
#include <sstream>

#include "engine/layers/opcosts.h"

namespace trainbench::engine {

using dnnl::memory;
using dnnl::prop_kind;

namespace {
int64_t product(const Dims& d) { return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<>()); }
}  // namespace

Dense::Dense(CpuDevice& device, Dims sampleShape, int64_t units, bool bias)
    : Layer(device, std::move(sampleShape)), inFeatures_(product(in_)), units_(units), hasBias_(bias) {
    out_ = {units_};
}

std::string Dense::describe() const {
    std::ostringstream s;
    s << "Dense(" << inFeatures_ << " -> " << units_ << (hasBias_ ? "" : ", no bias") << ")";
    return s.str();
}

int64_t Dense::paramCount() const { return units_ * inFeatures_ + (hasBias_ ? units_ : 0); }

void Dense::bindParams(float* params, float* grads) {
    const auto& eng = device_.engine();
    weights_ = Tensor(Tensor::plainDesc({units_, inFeatures_}), eng, params);
    gradWeights_ = Tensor(Tensor::plainDesc({units_, inFeatures_}), eng, grads);
    if (hasBias_) {
        bias_ = Tensor(Tensor::plainDesc({units_}), eng, params + units_ * inFeatures_);
        gradBias_ = Tensor(Tensor::plainDesc({units_}), eng, grads + units_ * inFeatures_);
    }
}

void Dense::initParams(Rng& rng) {
    // Glorot/Xavier uniform (Keras' default); biases start at zero.
    const float limit = std::sqrt(6.0f / static_cast<float>(inFeatures_ + units_));
    float* w = weights_.data();
    for (int64_t i = 0; i < units_ * inFeatures_; ++i) w[i] = rng.uniform(-limit, limit);
    if (hasBias_) std::fill(bias_.data(), bias_.data() + units_, 0.0f);
}

std::unique_ptr<Dense::Plan> Dense::makePlan(int64_t batch, bool training) {
    const auto& eng = device_.engine();
    auto p = std::make_unique<Plan>();
    memory::desc srcMd = Tensor::plainDesc({batch, inFeatures_});
    memory::desc wMd = Tensor::plainDesc({units_, inFeatures_});
    memory::desc bMd = Tensor::plainDesc({units_});
    memory::desc dstMd = Tensor::plainDesc({batch, units_});
    auto kind = training ? prop_kind::forward_training : prop_kind::forward_inference;
    dnnl::inner_product_forward::primitive_desc fwdPd(
        hasBias_ ? dnnl::inner_product_forward::desc(kind, srcMd, wMd, bMd, dstMd)
                 : dnnl::inner_product_forward::desc(kind, srcMd, wMd, dstMd),
        reluAttr(fusedReLU_), eng);
    p->fwd = dnnl::inner_product_forward(fwdPd);
    p->dst = Tensor(dstMd, eng);
    using opcost::Pass;
    p->fwdOp = addOp(opcost::innerProduct(Pass::Forward, batch, inFeatures_, units_, hasBias_, fusedReLU_));
    if (training) {
        p->bwdWeightsOp = addOp(opcost::innerProduct(Pass::BackwardWeights, batch, inFeatures_, units_, hasBias_, false));
        if (needsInputGrad_)
            p->bwdDataOp = addOp(opcost::innerProduct(Pass::BackwardData, batch, inFeatures_, units_, hasBias_, false));
        if (needsInputGrad_) {
            dnnl::inner_product_backward_data::primitive_desc bdPd(
                dnnl::inner_product_backward_data::desc(srcMd, wMd, dstMd), eng, fwdPd);
            p->bwdData = dnnl::inner_product_backward_data(bdPd);
            p->gradInput = Tensor(srcMd, eng);
            p->gradInputView = Tensor(Tensor::plainDesc(batchDims(batch, in_)), eng, p->gradInput.data());
        }
        auto bwPd = hasBias_
            ? dnnl::inner_product_backward_weights::primitive_desc(
                  dnnl::inner_product_backward_weights::desc(srcMd, wMd, bMd, dstMd), eng, fwdPd)
            : dnnl::inner_product_backward_weights::primitive_desc(
                  dnnl::inner_product_backward_weights::desc(srcMd, wMd, dstMd), eng, fwdPd);
        p->bwdWeights = dnnl::inner_product_backward_weights(bwPd);
    }
    return p;
}

Tensor& Dense::forward(Tensor& input, bool training) {
    const int64_t batch = batchOf(input);
    Plan& p = plans_.get(batch, training, [&] { return makePlan(batch, training); });
    // Flatten: a plain [N, C, H, W] buffer is already a plain [N, C*H*W] one; blocked layouts reorder.
    Tensor& plain = toPlain_.convert(input, Tensor::plainDesc(input.dims()), device_);
    if (p.src.empty() || p.src.data() != plain.data())
        p.src = Tensor(Tensor::plainDesc({batch, inFeatures_}), device_.engine(), plain.data());
    lastInput_ = &input;
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, p.src.mem()}, {DNNL_ARG_WEIGHTS, weights_.mem()}, {DNNL_ARG_DST, p.dst.mem()}};
    if (hasBias_) args.emplace(DNNL_ARG_BIAS, bias_.mem());
    prof::OpTimer timer(p.fwdOp);
    p.fwd.execute(device_.stream(), args);
    return p.dst;
}

Tensor* Dense::backward(Tensor& gradOutput) {
    Plan& p = *plans_.current();
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, p.src.mem()},
                                         {DNNL_ARG_DIFF_DST, gradOutput.mem()},
                                         {DNNL_ARG_DIFF_WEIGHTS, gradWeights_.mem()}};
    if (hasBias_) args.emplace(DNNL_ARG_DIFF_BIAS, gradBias_.mem());
    {
        prof::OpTimer timer(p.bwdWeightsOp);
        p.bwdWeights.execute(device_.stream(), args);
    }
    if (!needsInputGrad_) return nullptr;
    {
        prof::OpTimer timer(p.bwdDataOp);
        p.bwdData.execute(device_.stream(), {{DNNL_ARG_DIFF_DST, gradOutput.mem()},
                                             {DNNL_ARG_WEIGHTS, weights_.mem()},
                                             {DNNL_ARG_DIFF_SRC, p.gradInput.mem()}});
    }
    if (lastInput_->isPlain()) return &p.gradInputView;
    // The input came in a blocked layout (after a convolution): hand the gradient back in that layout.
    return &toPlainBack_.convert(p.gradInputView, lastInput_->desc(), device_);
}

void Dense::describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const {
    using opcost::Pass;
    // Y[batch x units] = X[batch x in] W^T; dW[units x in] = dY^T X; dX[batch x in] = dY W.
    out.push_back(describedOp(opcost::innerProduct(Pass::Forward, batch, inFeatures_, units_, hasBias_, fusedReLU_),
                     StepPart::Forward, MatrixShape{batch, units_, inFeatures_}));
    if (!training) return;
    out.push_back(describedOp(opcost::innerProduct(Pass::BackwardWeights, batch, inFeatures_, units_, hasBias_, false),
                     StepPart::Backward, MatrixShape{units_, inFeatures_, batch}));
    if (needsInputGrad_)
        out.push_back(describedOp(opcost::innerProduct(Pass::BackwardData, batch, inFeatures_, units_, hasBias_, false),
                         StepPart::Backward, MatrixShape{batch, inFeatures_, units_}));
}

}  // namespace trainbench::engine
