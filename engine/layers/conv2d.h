#pragma once
// 2-D convolution (NCHW, square kernel, stride, symmetric zero padding) on oneDNN. Weights are stored
// plain [out, in, kh, kw] in the model's parameter buffer; activations travel in whatever blocked
// layout oneDNN picks as fastest, and the weights are reordered to the kernel's layout each step.
#include "engine/layers/layer.h"
#include "engine/layers/layoutconverter.h"

namespace trainbench::engine {

class Conv2D : public Layer {
public:
    Conv2D(CpuDevice& device, Dims sampleShape, int64_t filters, int64_t kernel, int64_t stride,
           int64_t padding, bool bias);

    std::string describe() const override;
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override;
    const char* kind() const override { return "conv2d"; }
    int64_t paramCount() const override;
    void bindParams(float* params, float* grads) override;
    void initParams(Rng& rng) override;
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;
    bool fuseReLU() override { return fusedReLU_ = true; }

    int64_t inChannels() const { return inChannels_; }
    int64_t filters() const { return filters_; }
    int64_t kernel() const { return kernel_; }
    bool hasBias() const { return hasBias_; }
    // oneDNN's implementation of each primitive of the last batch size's plan: forward, then in
    // training the weights' gradient and (unless first) the input's; empty before a forward.
    std::vector<std::string> kernels();

private:
    struct Plan {
        dnnl::convolution_forward fwd;
        dnnl::convolution_backward_data bwdData;
        dnnl::convolution_backward_weights bwdWeights;
        dnnl::memory::desc srcMd, weightsMd, bwdDataWeightsMd, diffWeightsMd;
        // The layouts the weight gradient's primitive reads its input and the output's gradient in:
        // the forward's, unless oneDNN has only its reference kernel for those (then its choice).
        dnnl::memory::desc bwdWeightsSrcMd, bwdWeightsDiffDstMd;
        dnnl::memory::desc bwdDataDiffDstMd;  // the same for the input's gradient
        std::vector<std::string> kernels;     // oneDNN's implementations: forward, weights, input gradient
        Tensor dst;
        Tensor gradSrc;            // in srcMd layout
        Tensor weightsFwd, weightsBwd, gradWeightsTmp;  // reordered copies, when layouts differ
        LayoutConverter inputConv, gradInputConv, weightsFwdConv, weightsBwdConv, gradWeightsConv;
        LayoutConverter bwdWeightsSrcConv, bwdWeightsDiffDstConv, bwdDataDiffDstConv;
        prof::OpStat* fwdOp = nullptr;  // per-op statistics of the three primitives
        prof::OpStat* bwdDataOp = nullptr;
        prof::OpStat* bwdWeightsOp = nullptr;
    };
    std::unique_ptr<Plan> makePlan(int64_t batch, bool training);
    Tensor& weightsIn(const dnnl::memory::desc& md, Tensor& buffer, LayoutConverter& conv);

    int64_t inChannels_, filters_, kernel_, stride_, padding_;
    bool hasBias_;
    bool fusedReLU_ = false;
    Tensor weights_, bias_, gradWeights_, gradBias_;
    PlanCache<Plan> plans_;
    Tensor* lastInput_ = nullptr;
    Tensor* src_ = nullptr;  // the input in the primitive's layout
};

}  // namespace trainbench::engine
