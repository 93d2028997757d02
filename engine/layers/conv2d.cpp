#include "engine/layers/conv2d.h"

#include <cmath>
#include <sstream>
#include <string>

#include "engine/layers/opcosts.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

Conv2D::Conv2D(CpuDevice& device, Dims sampleShape, int64_t filters, int64_t kernel, int64_t stride,
               int64_t padding, bool bias)
    : Layer(device, std::move(sampleShape)), filters_(filters), kernel_(kernel), stride_(stride),
      padding_(padding), hasBias_(bias) {
    if (in_.size() != 3)
        throw ModelError("conv2d needs an input of shape [channels, height, width], got rank " +
                         std::to_string(in_.size()));
    inChannels_ = in_[0];
    const int64_t h = (in_[1] + 2 * padding_ - kernel_) / stride_ + 1;
    const int64_t w = (in_[2] + 2 * padding_ - kernel_) / stride_ + 1;
    if (in_[1] + 2 * padding_ < kernel_ || in_[2] + 2 * padding_ < kernel_ || h <= 0 || w <= 0)
        throw ModelError("conv2d kernel " + std::to_string(kernel_) + " does not fit an input of " +
                         std::to_string(in_[1]) + "x" + std::to_string(in_[2]) + " with padding " +
                         std::to_string(padding_));
    out_ = {filters_, h, w};
}

std::string Conv2D::describe() const {
    std::ostringstream s;
    s << "Conv2D(" << inChannels_ << " -> " << filters_ << ", " << kernel_ << "x" << kernel_
      << ", stride " << stride_ << ", pad " << padding_ << (hasBias_ ? "" : ", no bias") << ")";
    return s.str();
}

int64_t Conv2D::paramCount() const {
    return filters_ * inChannels_ * kernel_ * kernel_ + (hasBias_ ? filters_ : 0);
}

void Conv2D::bindParams(float* params, float* grads) {
    const auto& eng = device_.engine();
    Dims wd{filters_, inChannels_, kernel_, kernel_};
    const int64_t nw = filters_ * inChannels_ * kernel_ * kernel_;
    weights_ = Tensor(Tensor::plainDesc(wd), eng, params);
    gradWeights_ = Tensor(Tensor::plainDesc(wd), eng, grads);
    if (hasBias_) {
        bias_ = Tensor(Tensor::plainDesc({filters_}), eng, params + nw);
        gradBias_ = Tensor(Tensor::plainDesc({filters_}), eng, grads + nw);
    }
}

void Conv2D::initParams(Rng& rng) {
    // Glorot uniform over the receptive field, as Keras does; zero biases.
    const float fanIn = static_cast<float>(inChannels_ * kernel_ * kernel_);
    const float fanOut = static_cast<float>(filters_ * kernel_ * kernel_);
    const float limit = std::sqrt(6.0f / (fanIn + fanOut));
    float* w = weights_.data();
    for (int64_t i = 0, n = filters_ * inChannels_ * kernel_ * kernel_; i < n; ++i) w[i] = rng.uniform(-limit, limit);
    if (hasBias_) std::fill(bias_.data(), bias_.data() + filters_, 0.0f);
}

std::unique_ptr<Conv2D::Plan> Conv2D::makePlan(int64_t batch, bool training) {
    const auto& eng = device_.engine();
    auto p = std::make_unique<Plan>();
    auto f32 = memory::data_type::f32;
    memory::desc srcAny(batchDims(batch, in_), f32, tag::any);
    memory::desc wAny({filters_, inChannels_, kernel_, kernel_}, f32, tag::any);
    memory::desc bMd = Tensor::plainDesc({filters_});
    memory::desc dstAny(batchDims(batch, out_), f32, tag::any);
    memory::dims strides{stride_, stride_}, pad{padding_, padding_};
    auto kind = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    auto fwdDesc = hasBias_
        ? dnnl::convolution_forward::desc(kind, dnnl::algorithm::convolution_direct, srcAny, wAny, bMd,
                                          dstAny, strides, pad, pad)
        : dnnl::convolution_forward::desc(kind, dnnl::algorithm::convolution_direct, srcAny, wAny, dstAny,
                                          strides, pad, pad);
    dnnl::convolution_forward::primitive_desc fwdPd(fwdDesc, reluAttr(fusedReLU_), eng);
    p->fwd = dnnl::convolution_forward(fwdPd);
    p->srcMd = fwdPd.src_desc();
    p->weightsMd = fwdPd.weights_desc();
    p->dst = Tensor(fwdPd.dst_desc(), eng);
    using opcost::Pass;
    const Dims srcDims = batchDims(batch, in_), dstDims = batchDims(batch, out_);
    p->fwdOp = addOp(opcost::convolution(Pass::Forward, srcDims, dstDims, kernel_, hasBias_, fusedReLU_));
    if (training) {
        p->bwdWeightsOp = addOp(opcost::convolution(Pass::BackwardWeights, srcDims, dstDims, kernel_, hasBias_, false));
        if (needsInputGrad_)
            p->bwdDataOp = addOp(opcost::convolution(Pass::BackwardData, srcDims, dstDims, kernel_, hasBias_, false));
        // Backward primitives see exactly the forward's activation layouts, so no reorders in between.
        auto bwDesc = hasBias_
            ? dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, p->srcMd, wAny, bMd,
                                                       fwdPd.dst_desc(), strides, pad, pad)
            : dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, p->srcMd, wAny,
                                                       fwdPd.dst_desc(), strides, pad, pad);
        dnnl::convolution_backward_weights::primitive_desc bwPd(bwDesc, eng, fwdPd);
        // oneDNN may have only its reference kernel for the forward's layouts: on AVX2, a first
        // convolution's plain one-channel input with a blocked output gradient (W2's first layer:
        // 875 ms a step instead of 3). Then the layouts are its choice, and the input and the output's
        // gradient are reordered to them (a few milliseconds at most).
        if (std::string(bwPd.impl_info_str()).rfind("ref", 0) == 0) {
            auto anyDesc = hasBias_
                ? dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, srcAny, wAny, bMd,
                                                           dstAny, strides, pad, pad)
                : dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, srcAny, wAny, dstAny,
                                                           strides, pad, pad);
            dnnl::convolution_backward_weights::primitive_desc anyPd(anyDesc, eng, fwdPd);
            if (std::string(anyPd.impl_info_str()).rfind("ref", 0) != 0) bwPd = anyPd;
        }
        p->bwdWeights = dnnl::convolution_backward_weights(bwPd);
        p->diffWeightsMd = bwPd.diff_weights_desc();
        p->bwdWeightsSrcMd = bwPd.src_desc();
        p->bwdWeightsDiffDstMd = bwPd.diff_dst_desc();
        if (needsInputGrad_) {
            dnnl::convolution_backward_data::primitive_desc bdPd(
                dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, p->srcMd, wAny,
                                                      fwdPd.dst_desc(), strides, pad, pad),
                eng, fwdPd);
            // The same for the input's gradient: a slice of 8 input channels (tensor parallelism's
            // row split of W2's second convolution over 4 devices) in the forward's layouts has only
            // the reference kernel here, 1.3 s a call instead of about a millisecond.
            if (std::string(bdPd.impl_info_str()).rfind("ref", 0) == 0) {
                dnnl::convolution_backward_data::primitive_desc anyPd(
                    dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, srcAny, wAny, dstAny,
                                                          strides, pad, pad),
                    eng, fwdPd);
                if (std::string(anyPd.impl_info_str()).rfind("ref", 0) != 0) bdPd = anyPd;
            }
            p->bwdData = dnnl::convolution_backward_data(bdPd);
            p->bwdDataWeightsMd = bdPd.weights_desc();
            p->bwdDataDiffDstMd = bdPd.diff_dst_desc();
            p->gradSrc = Tensor(bdPd.diff_src_desc(), eng);
            p->kernels.push_back(bdPd.impl_info_str());
        }
        p->kernels.insert(p->kernels.begin(), bwPd.impl_info_str());
    }
    p->kernels.insert(p->kernels.begin(), fwdPd.impl_info_str());
    return p;
}

Tensor& Conv2D::weightsIn(const memory::desc& md, Tensor& buffer, LayoutConverter& conv) {
    if (md == weights_.desc()) return weights_;
    if (buffer.empty()) buffer = Tensor(md, device_.engine());
    conv.convertInto(weights_, buffer, device_);
    return buffer;
}

Tensor& Conv2D::forward(Tensor& input, bool training) {
    const int64_t batch = batchOf(input);
    Plan& p = plans_.get(batch, training, [&] { return makePlan(batch, training); });
    lastInput_ = &input;
    src_ = &p.inputConv.convert(input, p.srcMd, device_);
    Tensor& w = weightsIn(p.weightsMd, p.weightsFwd, p.weightsFwdConv);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src_->mem()}, {DNNL_ARG_WEIGHTS, w.mem()}, {DNNL_ARG_DST, p.dst.mem()}};
    if (hasBias_) args.emplace(DNNL_ARG_BIAS, bias_.mem());
    prof::OpTimer timer(p.fwdOp);
    p.fwd.execute(device_.stream(), args);
    return p.dst;
}

Tensor* Conv2D::backward(Tensor& gradOutput) {
    Plan& p = *plans_.current();
    const bool directGrads = p.diffWeightsMd == gradWeights_.desc();
    if (!directGrads && p.gradWeightsTmp.empty()) p.gradWeightsTmp = Tensor(p.diffWeightsMd, device_.engine());
    Tensor& dw = directGrads ? gradWeights_ : p.gradWeightsTmp;
    Tensor& src = p.bwdWeightsSrcConv.convert(*src_, p.bwdWeightsSrcMd, device_);
    Tensor& diffDst = p.bwdWeightsDiffDstConv.convert(gradOutput, p.bwdWeightsDiffDstMd, device_);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src.mem()}, {DNNL_ARG_DIFF_DST, diffDst.mem()}, {DNNL_ARG_DIFF_WEIGHTS, dw.mem()}};
    if (hasBias_) args.emplace(DNNL_ARG_DIFF_BIAS, gradBias_.mem());
    {
        prof::OpTimer timer(p.bwdWeightsOp);
        p.bwdWeights.execute(device_.stream(), args);
    }
    if (!directGrads) p.gradWeightsConv.convertInto(dw, gradWeights_, device_);
    if (!needsInputGrad_) return nullptr;
    Tensor& w = weightsIn(p.bwdDataWeightsMd, p.weightsBwd, p.weightsBwdConv);
    Tensor& diffDstData = p.bwdDataDiffDstConv.convert(gradOutput, p.bwdDataDiffDstMd, device_);
    {
        prof::OpTimer timer(p.bwdDataOp);
        p.bwdData.execute(device_.stream(), {{DNNL_ARG_DIFF_DST, diffDstData.mem()},
                                             {DNNL_ARG_WEIGHTS, w.mem()},
                                             {DNNL_ARG_DIFF_SRC, p.gradSrc.mem()}});
    }
    return &p.gradInputConv.convert(p.gradSrc, lastInput_->desc(), device_);
}

std::vector<std::string> Conv2D::kernels() {
    Plan* p = plans_.current();
    return p ? p->kernels : std::vector<std::string>{};
}

void Conv2D::describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const {
    using opcost::Pass;
    // As implicit GEMMs over the im2col matrix col[N*OH*OW x C*K*K]: Y = col W^T,
    // dW[F x C*K*K] = dY^T col, dcol = dY W (then col2im); each has the forward's multiply-adds.
    const Dims src = batchDims(batch, in_), dst = batchDims(batch, out_);
    const int64_t pixels = batch * out_[1] * out_[2], patch = inChannels_ * kernel_ * kernel_;
    out.push_back(describedOp(opcost::convolution(Pass::Forward, src, dst, kernel_, hasBias_, fusedReLU_), StepPart::Forward,
                     MatrixShape{pixels, filters_, patch}));
    if (!training) return;
    out.push_back(describedOp(opcost::convolution(Pass::BackwardWeights, src, dst, kernel_, hasBias_, false),
                     StepPart::Backward, MatrixShape{filters_, patch, pixels}));
    if (needsInputGrad_)
        out.push_back(describedOp(opcost::convolution(Pass::BackwardData, src, dst, kernel_, hasBias_, false),
                         StepPart::Backward, MatrixShape{pixels, patch, filters_}));
}

}  // namespace trainbench::engine
