#pragma once
// Max pooling over square windows (no padding) on oneDNN; works in whatever layout its input has.
#include "engine/layers/layer.h"

namespace trainbench::engine {

class MaxPool2D : public Layer {
public:
    MaxPool2D(CpuDevice& device, Dims sampleShape, int64_t size, int64_t stride);

    std::string describe() const override;
    const char* kind() const override { return "maxpool2d"; }
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;

private:
    struct Plan {
        dnnl::memory::desc srcMd;
        dnnl::pooling_forward fwd;
        dnnl::pooling_backward bwd;
        Tensor dst, gradSrc;
        dnnl::memory workspace;  // argmax positions kept for backward
        AlignedBuffer workspaceStorage;
    };
    std::unique_ptr<Plan> makePlan(const dnnl::memory::desc& srcMd, bool training);

    int64_t size_, stride_;
    PlanCache<Plan> plans_;
};

}  // namespace trainbench::engine
