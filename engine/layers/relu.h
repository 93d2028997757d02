#pragma once
// ReLU on oneDNN's eltwise primitive, in place in both directions: the backward pass needs only the
// output (x > 0 exactly where relu(x) > 0), so the input buffer can be overwritten.
#include "engine/layers/layer.h"
#include "engine/layers/opcosts.h"

namespace trainbench::engine {

class ReLU : public Layer {
public:
    ReLU(CpuDevice& device, Dims sampleShape) : Layer(device, std::move(sampleShape)) { out_ = in_; }

    std::string describe() const override { return fused_ ? "ReLU (fused into the previous layer)" : "ReLU"; }
    const char* kind() const override { return "relu"; }
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override {
        const Dims d = batchDims(batch, in_);
        if (!fused_) out.push_back(describedOp(opcost::elementwise("eltwise_relu_forward", d, 2, 1.0), StepPart::Forward));
        // With the previous layer applying the gradient too (batch norm), nothing is left for this one.
        if (training && !fusedBackward_)
            out.push_back(describedOp(opcost::elementwise("eltwise_relu_backward", d, 3, 1.0), StepPart::Backward));
    }
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;
    // The previous layer already applies ReLU to its output: forward passes it through, and backward
    // (which needs only the output) works as before, unless `withBackward`: the previous layer's
    // backward applies ReLU's gradient too (batch norm's fused ReLU), and this layer passes the
    // gradient through unchanged.
    void setFusedIntoPrevious(bool fused, bool withBackward = false) {
        fused_ = fused;
        fusedBackward_ = fused && withBackward;
    }
    bool fusedIntoPrevious() const { return fused_; }

private:
    struct Plan {
        dnnl::memory::desc md;
        dnnl::eltwise_forward fwd;
        dnnl::eltwise_backward bwd;
        prof::OpStat* fwdOp = nullptr;  // per-op statistics (the forward only when not fused)
        prof::OpStat* bwdOp = nullptr;
    };
    std::unique_ptr<Plan> makePlan(const dnnl::memory::desc& md, bool training);

    PlanCache<Plan> plans_;
    Tensor* output_ = nullptr;
    bool fused_ = false;
    bool fusedBackward_ = false;
};

}  // namespace trainbench::engine
