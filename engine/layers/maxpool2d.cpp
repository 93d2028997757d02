#include "engine/layers/maxpool2d.h"

#include <sstream>

#include "engine/layers/opcosts.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using dnnl::memory;

MaxPool2D::MaxPool2D(CpuDevice& device, Dims sampleShape, int64_t size, int64_t stride, int64_t padding)
    : Layer(device, std::move(sampleShape)), size_(size), stride_(stride > 0 ? stride : size), padding_(padding) {
    if (in_.size() != 3)
        throw ModelError("maxpool2d needs an input of shape [channels, height, width], got rank " +
                         std::to_string(in_.size()));
    if (padding_ < 0 || 2 * padding_ > size_)
        throw ModelError("maxpool2d padding " + std::to_string(padding_) + " must be between 0 and half the window (" +
                         std::to_string(size_) + ")");
    if (in_[1] + 2 * padding_ < size_ || in_[2] + 2 * padding_ < size_)
        throw ModelError("maxpool2d window " + std::to_string(size_) + " is larger than its input " +
                         std::to_string(in_[1]) + "x" + std::to_string(in_[2]) +
                         (padding_ ? " with padding " + std::to_string(padding_) : std::string()));
    if (size_ * size_ >= kernels::kNoGradient)
        throw ModelError("maxpool2d window " + std::to_string(size_) + " is too large (at most 15)");
    out_ = {in_[0], (in_[1] + 2 * padding_ - size_) / stride_ + 1, (in_[2] + 2 * padding_ - size_) / stride_ + 1};
}

std::string MaxPool2D::describe() const {
    std::ostringstream s;
    s << "MaxPool2D(" << size_ << "x" << size_ << ", stride " << stride_
      << (padding_ ? ", pad " + std::to_string(padding_) : std::string()) << (fusedReLU_ ? ", then ReLU" : "") << ")";
    return s.str();
}

memory::desc MaxPool2D::blockedDesc(const Dims& dims) {
    return memory::desc(dims, memory::data_type::f32, memory::format_tag::aBcd16b);
}

std::unique_ptr<MaxPool2D::Plan> MaxPool2D::makeBlockedPlan(const memory::desc& srcMd, bool training) {
    auto p = std::make_unique<Plan>();
    p->srcMd = srcMd;
    p->blocked = true;
    const int64_t batch = srcMd.dims()[0];
    p->shape = {batch, (in_[0] + 15) / 16, in_[1], in_[2], out_[1], out_[2], size_, stride_};
    p->dst = Tensor(blockedDesc(batchDims(batch, out_)), device_.engine());
    p->argmax.resize(p->dst.desc().get_size() / sizeof(float));
    if (training && needsInputGrad_) p->gradSrc = Tensor(srcMd, device_.engine());
    return p;
}

std::unique_ptr<MaxPool2D::Plan> MaxPool2D::makePlan(const memory::desc& srcMd, bool training) {
    auto p = makeKernelPlan(srcMd, training);
    const int64_t batch = srcMd.dims()[0];
    const Dims src = batchDims(batch, in_), dst = batchDims(batch, out_);
    p->fwdOp = addOp(opcost::maxPooling(true, src, dst, size_, fusedReLU_));
    if (training && needsInputGrad_) p->bwdOp = addOp(opcost::maxPooling(false, src, dst, size_, fusedReLU_));
    return p;
}

std::unique_ptr<MaxPool2D::Plan> MaxPool2D::makeKernelPlan(const memory::desc& srcMd, bool training) {
    if (padding_ == 0 && srcMd == blockedDesc(srcMd.dims())) return makeBlockedPlan(srcMd, training);
    const auto& eng = device_.engine();
    auto p = std::make_unique<Plan>();
    p->srcMd = srcMd;
    const int64_t batch = srcMd.dims()[0];
    memory::desc dstAny(batchDims(batch, out_), memory::data_type::f32, memory::format_tag::any);
    memory::dims k{size_, size_}, s{stride_, stride_}, pad{padding_, padding_};
    auto kind = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    dnnl::pooling_forward::primitive_desc fwdPd(
        dnnl::pooling_forward::desc(kind, dnnl::algorithm::pooling_max, srcMd, dstAny, s, k, pad, pad), eng);
    p->fwd = dnnl::pooling_forward(fwdPd);
    p->dst = Tensor(fwdPd.dst_desc(), eng);
    constexpr auto kRelu = dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
    dnnl::eltwise_forward::primitive_desc reluPd(dnnl::eltwise_forward::desc(kind, kRelu, fwdPd.dst_desc()), eng);
    if (fusedReLU_) p->relu = dnnl::eltwise_forward(reluPd);
    if (training) {
        auto wsMd = fwdPd.workspace_desc();
        p->workspaceStorage = AlignedBuffer(wsMd.get_size() / sizeof(float) + 1);
        p->workspace = memory(wsMd, eng, p->workspaceStorage.data());
        dnnl::pooling_backward::primitive_desc bwdPd(
            dnnl::pooling_backward::desc(dnnl::algorithm::pooling_max, srcMd, fwdPd.dst_desc(), s, k, pad, pad),
            eng, fwdPd);
        p->bwd = dnnl::pooling_backward(bwdPd);
        if (needsInputGrad_) p->gradSrc = Tensor(bwdPd.diff_src_desc(), eng);
        if (fusedReLU_)
            p->reluBwd = dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(
                dnnl::eltwise_backward::desc(kRelu, fwdPd.dst_desc(), fwdPd.dst_desc()), eng, reluPd));
    }
    return p;
}

Tensor& MaxPool2D::forward(Tensor& input, bool training) {
    const int64_t batch = batchOf(input);
    Plan& p = plans_.get(batch, training, [&] { return makePlan(input.desc(), training); },
                         [&](const Plan& q) { return q.srcMd == input.desc(); });
    prof::OpTimer timer(p.fwdOp);
    if (p.blocked) {
        kernels::maxPoolForward(input.data(), p.dst.data(), p.argmax.data(), p.shape, fusedReLU_);
        return p.dst;
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, input.mem()}, {DNNL_ARG_DST, p.dst.mem()}};
    if (training) args.emplace(DNNL_ARG_WORKSPACE, p.workspace);
    p.fwd.execute(device_.stream(), args);
    if (fusedReLU_) p.relu.execute(device_.stream(), {{DNNL_ARG_SRC, p.dst.mem()}, {DNNL_ARG_DST, p.dst.mem()}});
    return p.dst;
}

Tensor* MaxPool2D::backward(Tensor& gradOutput) {
    if (!needsInputGrad_) return nullptr;
    Plan& p = *plans_.current();
    prof::OpTimer timer(p.bwdOp);
    if (p.blocked) {
        device_.stream().wait();  // gradOutput may come from a oneDNN primitive
        kernels::maxPoolBackward(gradOutput.data(), p.argmax.data(), p.gradSrc.data(), p.shape);
        return &p.gradSrc;
    }
    if (fusedReLU_)
        p.reluBwd.execute(device_.stream(), {{DNNL_ARG_DST, p.dst.mem()},
                                             {DNNL_ARG_DIFF_DST, gradOutput.mem()},
                                             {DNNL_ARG_DIFF_SRC, gradOutput.mem()}});
    p.bwd.execute(device_.stream(), {{DNNL_ARG_DIFF_DST, gradOutput.mem()},
                                     {DNNL_ARG_WORKSPACE, p.workspace},
                                     {DNNL_ARG_DIFF_SRC, p.gradSrc.mem()}});
    return &p.gradSrc;
}

void MaxPool2D::describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const {
    const Dims src = batchDims(batch, in_), dst = batchDims(batch, out_);
    out.push_back(describedOp(opcost::maxPooling(true, src, dst, size_, fusedReLU_), StepPart::Forward));
    if (training && needsInputGrad_)
        out.push_back(describedOp(opcost::maxPooling(false, src, dst, size_, fusedReLU_), StepPart::Backward));
}

}  // namespace trainbench::engine
