#pragma once
// ResNet's bottleneck residual block (He et al. 2016; the stride on the 3x3 convolution, as torchvision's
// ResNet-50 "v1.5"): conv 1x1 (width) -> BN -> ReLU -> conv 3x3 (width, stride, pad 1) -> BN -> ReLU
// -> conv 1x1 (4 * width) -> BN, plus the shortcut: the input itself, or conv 1x1 (4 * width, stride)
// -> BN when the stride is not 1 or the channel count changes; added, then ReLU. The convolutions have
// no bias (batch norm follows each). A composite layer: it owns its sub-layers, whose parameters and
// running statistics are consecutive parts of the block's slices of the model's buffers (main branch
// a, b, c, then the shortcut; each convolution followed by its batch norm).
#include <vector>

#include "engine/layers/layer.h"
#include "engine/layers/layoutconverter.h"

namespace trainbench::engine {

class Bottleneck : public Layer {
public:
    Bottleneck(CpuDevice& device, Dims sampleShape, int64_t width, int64_t stride, float momentum, float epsilon);

    std::string describe() const override;
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override;
    const char* kind() const override { return "bottleneck"; }
    int64_t paramCount() const override;
    void bindParams(float* params, float* grads) override;
    void initParams(Rng& rng) override;
    int64_t stateCount() const override;
    void bindState(float* state) override;
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;
    void setNeedsInputGrad(bool needs) override;
    void setStatisticsShards(int n) override;
    // Sub-ops are registered as <path>/conv_a, <path>/bn_a, ..., <path>/conv_shortcut, <path>/add.
    void setOpPath(std::string path) override;

    bool projection() const { return !shortcut_.empty(); }
    // Sub-layers in parameter order: conv_a, bn_a, conv_b, bn_b, conv_c, bn_c[, conv_shortcut, bn_shortcut].
    std::vector<Layer*> parts() const;

private:
    struct Plan {
        dnnl::memory::desc inMd, outMd, shortcutMd;
        dnnl::binary add;                  // out = relu(main + shortcut)
        dnnl::eltwise_backward reluBwd;    // gradient of that ReLU, in place
        dnnl::binary gradAdd;              // gradIn = main branch's input gradient + shortcut's
        Tensor out, gradIn;
        LayoutConverter shortcutConv, gradOutConv, gradShortcutConv;
        prof::OpStat* addOp = nullptr;
        prof::OpStat* reluBwdOp = nullptr;
        prof::OpStat* gradAddOp = nullptr;
    };
    std::unique_ptr<Plan> makePlan(const dnnl::memory::desc& inMd, const dnnl::memory::desc& outMd,
                                   const dnnl::memory::desc& shortcutMd, bool training);

    int64_t width_, stride_;
    std::vector<std::unique_ptr<Layer>> main_;      // conv_a, bn_a, conv_b, bn_b, conv_c, bn_c
    std::vector<std::unique_ptr<Layer>> shortcut_;  // conv_shortcut, bn_shortcut; empty for the identity
    PlanCache<Plan> plans_;
};

}  // namespace trainbench::engine
