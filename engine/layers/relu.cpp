#include "engine/layers/relu.h"

#include "engine/layers/opcosts.h"

namespace trainbench::engine {

namespace {
constexpr auto kAlg = dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
}

std::unique_ptr<ReLU::Plan> ReLU::makePlan(const dnnl::memory::desc& md, bool training) {
    const auto& eng = device_.engine();
    auto p = std::make_unique<Plan>();
    p->md = md;
    auto kind = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    dnnl::eltwise_forward::primitive_desc fwdPd(dnnl::eltwise_forward::desc(kind, kAlg, md, 0.0f, 0.0f), eng);
    p->fwd = dnnl::eltwise_forward(fwdPd);
    if (training) {
        dnnl::eltwise_backward::primitive_desc bwdPd(dnnl::eltwise_backward::desc(kAlg, md, md, 0.0f, 0.0f),
                                                     eng, fwdPd);
        p->bwd = dnnl::eltwise_backward(bwdPd);
        // Reads the output and the output gradient, writes the input gradient.
        p->bwdOp = addOp(opcost::elementwise("eltwise_relu_backward", md.dims(), 3, 1.0));
    }
    if (!fused_) p->fwdOp = addOp(opcost::elementwise("eltwise_relu_forward", md.dims(), 2, 1.0));
    return p;
}

Tensor& ReLU::forward(Tensor& input, bool training) {
    if (fused_) {
        output_ = &input;
        if (training && !fusedBackward_)
            plans_.get(batchOf(input), training, [&] { return makePlan(input.desc(), training); },
                       [&](const Plan& q) { return q.md == input.desc(); });
        return input;
    }
    Plan& p = plans_.get(batchOf(input), training, [&] { return makePlan(input.desc(), training); },
                         [&](const Plan& q) { return q.md == input.desc(); });
    {
        prof::OpTimer timer(p.fwdOp);
        p.fwd.execute(device_.stream(), {{DNNL_ARG_SRC, input.mem()}, {DNNL_ARG_DST, input.mem()}});
    }
    output_ = &input;
    return input;
}

Tensor* ReLU::backward(Tensor& gradOutput) {
    if (fusedBackward_) return &gradOutput;
    Plan& p = *plans_.current();
    prof::OpTimer timer(p.bwdOp);
    p.bwd.execute(device_.stream(), {{DNNL_ARG_DST, output_->mem()},
                                     {DNNL_ARG_DIFF_DST, gradOutput.mem()},
                                     {DNNL_ARG_DIFF_SRC, gradOutput.mem()}});
    return &gradOutput;
}

}  // namespace trainbench::engine
