#pragma once
// Max pooling over square windows, in whatever layout its input has, with optional padding (cells
// outside the input never win, as in PyTorch and Keras). Unpadded on oneDNN's 16-channel-blocked
// layout (what convolutions produce) it runs trainbench's own one-pass kernels (maxpoolkernels.h);
// otherwise oneDNN's pooling primitive. A following ReLU can be fused in.
#include <vector>

#include "engine/layers/layer.h"
#include "engine/layers/maxpoolkernels.h"

namespace trainbench::engine {

class MaxPool2D : public Layer {
public:
    // padding: cells added on each side, at most size / 2 (so every window overlaps the input).
    MaxPool2D(CpuDevice& device, Dims sampleShape, int64_t size, int64_t stride, int64_t padding = 0);

    std::string describe() const override;
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override;
    const char* kind() const override { return "maxpool2d"; }
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;
    bool fuseReLU() override { return fusedReLU_ = true; }

private:
    struct Plan {
        dnnl::memory::desc srcMd;
        bool blocked = false;           // own kernels on aBcd16b
        kernels::PoolShape shape{};
        std::vector<uint8_t> argmax;    // own kernels: arg-max per output element
        dnnl::pooling_forward fwd;      // oneDNN path
        dnnl::pooling_backward bwd;
        dnnl::eltwise_forward relu;     // oneDNN path with a fused ReLU
        dnnl::eltwise_backward reluBwd;
        dnnl::memory workspace;
        AlignedBuffer workspaceStorage;
        Tensor dst, gradSrc;
        prof::OpStat* fwdOp = nullptr;  // per-op statistics (pooling with its fused ReLU)
        prof::OpStat* bwdOp = nullptr;
    };
    std::unique_ptr<Plan> makePlan(const dnnl::memory::desc& srcMd, bool training);
    std::unique_ptr<Plan> makeKernelPlan(const dnnl::memory::desc& srcMd, bool training);
    std::unique_ptr<Plan> makeBlockedPlan(const dnnl::memory::desc& srcMd, bool training);
    static dnnl::memory::desc blockedDesc(const Dims& dims);

    int64_t size_, stride_, padding_;
    bool fusedReLU_ = false;
    PlanCache<Plan> plans_;
};

}  // namespace trainbench::engine
