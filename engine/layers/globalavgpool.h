#pragma once
// Global average pooling: [N, C, H, W] -> [N, C], the mean of each channel over its whole spatial
// extent (ResNet's head), on oneDNN's average pooling with one window the size of the input. The
// output is plain, ready for a dense layer.
#include "engine/layers/layer.h"
#include "engine/layers/layoutconverter.h"

namespace trainbench::engine {

class GlobalAvgPool : public Layer {
public:
    GlobalAvgPool(CpuDevice& device, Dims sampleShape);

    std::string describe() const override;
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override;
    const char* kind() const override { return "global_avg_pool"; }
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;

private:
    struct Plan {
        dnnl::memory::desc srcMd;
        dnnl::pooling_forward fwd;
        dnnl::pooling_backward bwd;
        Tensor dst;        // [N, C, 1, 1] in the primitive's layout
        Tensor out;        // [N, C] plain view of the plain copy of dst
        Tensor gradDst4;   // the output gradient viewed as [N, C, 1, 1] plain
        Tensor gradSrc;    // in the input's layout
        LayoutConverter toPlain, gradToDst;
        prof::OpStat* fwdOp = nullptr;
        prof::OpStat* bwdOp = nullptr;
    };
    std::unique_ptr<Plan> makePlan(const dnnl::memory::desc& srcMd, bool training);

    PlanCache<Plan> plans_;
};

}  // namespace trainbench::engine
