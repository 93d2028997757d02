#include "engine/layers/globalavgpool.h"

#include "engine/layers/opcosts.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using dnnl::memory;

GlobalAvgPool::GlobalAvgPool(CpuDevice& device, Dims sampleShape) : Layer(device, std::move(sampleShape)) {
    if (in_.size() != 3)
        throw ModelError("global_avg_pool needs an input of shape [channels, height, width], got rank " +
                         std::to_string(in_.size()));
    out_ = {in_[0]};
}

std::string GlobalAvgPool::describe() const {
    return "GlobalAvgPool(" + std::to_string(in_[1]) + "x" + std::to_string(in_[2]) + ")";
}

std::unique_ptr<GlobalAvgPool::Plan> GlobalAvgPool::makePlan(const memory::desc& srcMd, bool training) {
    const auto& eng = device_.engine();
    auto p = std::make_unique<Plan>();
    p->srcMd = srcMd;
    const int64_t batch = srcMd.dims()[0], c = in_[0];
    const memory::dims window{in_[1], in_[2]}, pad{0, 0};
    const memory::desc dstAny({batch, c, 1, 1}, memory::data_type::f32, memory::format_tag::any);
    const auto kind = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    constexpr auto kAvg = dnnl::algorithm::pooling_avg_exclude_padding;
    dnnl::pooling_forward::primitive_desc fwdPd({kind, kAvg, srcMd, dstAny, window, window, pad, pad}, eng);
    p->fwd = dnnl::pooling_forward(fwdPd);
    p->dst = Tensor(fwdPd.dst_desc(), eng);
    const Dims src = batchDims(batch, in_);
    p->fwdOp = addOp(opcost::globalAvgPooling(true, src));
    if (training && needsInputGrad_) {
        dnnl::pooling_backward::primitive_desc bwdPd({kAvg, srcMd, fwdPd.dst_desc(), window, window, pad, pad}, eng,
                                                     fwdPd);
        p->bwd = dnnl::pooling_backward(bwdPd);
        p->gradSrc = Tensor(bwdPd.diff_src_desc(), eng);
        p->bwdOp = addOp(opcost::globalAvgPooling(false, src));
    }
    return p;
}

Tensor& GlobalAvgPool::forward(Tensor& input, bool training) {
    const int64_t batch = batchOf(input);
    Plan& p = plans_.get(batch, training, [&] { return makePlan(input.desc(), training); },
                         [&](const Plan& q) { return q.srcMd == input.desc(); });
    {
        prof::OpTimer timer(p.fwdOp);
        p.fwd.execute(device_.stream(), {{DNNL_ARG_SRC, input.mem()}, {DNNL_ARG_DST, p.dst.mem()}});
    }
    // A plain [N, C, 1, 1] buffer is a plain [N, C] one.
    Tensor& plain = p.toPlain.convert(p.dst, Tensor::plainDesc(p.dst.dims()), device_);
    if (p.out.empty() || p.out.data() != plain.data())
        p.out = Tensor(Tensor::plainDesc({batch, in_[0]}), device_.engine(), plain.data());
    return p.out;
}

Tensor* GlobalAvgPool::backward(Tensor& gradOutput) {
    if (!needsInputGrad_) return nullptr;
    Plan& p = *plans_.current();
    const Dims d4 = p.dst.dims();
    if (p.gradDst4.empty() || p.gradDst4.data() != gradOutput.data())
        p.gradDst4 = Tensor(Tensor::plainDesc(d4), device_.engine(), gradOutput.data());
    Tensor& gy = p.gradToDst.convert(p.gradDst4, p.dst.desc(), device_);
    prof::OpTimer timer(p.bwdOp);
    p.bwd.execute(device_.stream(), {{DNNL_ARG_DIFF_DST, gy.mem()}, {DNNL_ARG_DIFF_SRC, p.gradSrc.mem()}});
    return &p.gradSrc;
}

void GlobalAvgPool::describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const {
    const Dims src = batchDims(batch, in_);
    out.push_back(describedOp(opcost::globalAvgPooling(true, src), StepPart::Forward));
    if (training && needsInputGrad_) out.push_back(describedOp(opcost::globalAvgPooling(false, src), StepPart::Backward));
}

}  // namespace trainbench::engine
