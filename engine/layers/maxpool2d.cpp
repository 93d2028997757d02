#include "engine/layers/maxpool2d.h"

#include <sstream>

#include "engine/util/errors.h"

namespace trainbench::engine {

using dnnl::memory;

MaxPool2D::MaxPool2D(CpuDevice& device, Dims sampleShape, int64_t size, int64_t stride)
    : Layer(device, std::move(sampleShape)), size_(size), stride_(stride > 0 ? stride : size) {
    if (in_.size() != 3)
        throw ModelError("maxpool2d needs an input of shape [channels, height, width], got rank " +
                         std::to_string(in_.size()));
    if (in_[1] < size_ || in_[2] < size_)
        throw ModelError("maxpool2d window " + std::to_string(size_) + " is larger than its input " +
                         std::to_string(in_[1]) + "x" + std::to_string(in_[2]));
    out_ = {in_[0], (in_[1] - size_) / stride_ + 1, (in_[2] - size_) / stride_ + 1};
}

std::string MaxPool2D::describe() const {
    std::ostringstream s;
    s << "MaxPool2D(" << size_ << "x" << size_ << ", stride " << stride_ << ")";
    return s.str();
}

std::unique_ptr<MaxPool2D::Plan> MaxPool2D::makePlan(const memory::desc& srcMd, bool training) {
    const auto& eng = device_.engine();
    auto p = std::make_unique<Plan>();
    p->srcMd = srcMd;
    const int64_t batch = srcMd.dims()[0];
    memory::desc dstAny(batchDims(batch, out_), memory::data_type::f32, memory::format_tag::any);
    memory::dims k{size_, size_}, s{stride_, stride_}, pad{0, 0};
    auto kind = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    dnnl::pooling_forward::primitive_desc fwdPd(
        dnnl::pooling_forward::desc(kind, dnnl::algorithm::pooling_max, srcMd, dstAny, s, k, pad, pad), eng);
    p->fwd = dnnl::pooling_forward(fwdPd);
    p->dst = Tensor(fwdPd.dst_desc(), eng);
    if (training) {
        auto wsMd = fwdPd.workspace_desc();
        p->workspaceStorage = AlignedBuffer(wsMd.get_size() / sizeof(float) + 1);
        p->workspace = memory(wsMd, eng, p->workspaceStorage.data());
        dnnl::pooling_backward::primitive_desc bwdPd(
            dnnl::pooling_backward::desc(dnnl::algorithm::pooling_max, srcMd, fwdPd.dst_desc(), s, k, pad, pad),
            eng, fwdPd);
        p->bwd = dnnl::pooling_backward(bwdPd);
        if (needsInputGrad_) p->gradSrc = Tensor(bwdPd.diff_src_desc(), eng);
    }
    return p;
}

Tensor& MaxPool2D::forward(Tensor& input, bool training) {
    const int64_t batch = batchOf(input);
    Plan& p = plans_.get(batch, training, [&] { return makePlan(input.desc(), training); },
                         [&](const Plan& q) { return q.srcMd == input.desc(); });
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, input.mem()}, {DNNL_ARG_DST, p.dst.mem()}};
    if (training) args.emplace(DNNL_ARG_WORKSPACE, p.workspace);
    p.fwd.execute(device_.stream(), args);
    return p.dst;
}

Tensor* MaxPool2D::backward(Tensor& gradOutput) {
    if (!needsInputGrad_) return nullptr;
    Plan& p = *plans_.current();
    p.bwd.execute(device_.stream(), {{DNNL_ARG_DIFF_DST, gradOutput.mem()},
                                     {DNNL_ARG_WORKSPACE, p.workspace},
                                     {DNNL_ARG_DIFF_SRC, p.gradSrc.mem()}});
    return &p.gradSrc;
}

}  // namespace trainbench::engine
