#pragma once
// Fully connected layer y = x W^T + b on oneDNN's inner product. Weights are [out, in] (PyTorch's
// layout), plain, so they live unchanged in the model's contiguous parameter buffer. Inputs of rank > 2
// are flattened per example.
#include "engine/layers/layer.h"
#include "engine/layers/layoutconverter.h"

namespace trainbench::engine {

class Dense : public Layer {
public:
    Dense(CpuDevice& device, Dims sampleShape, int64_t units, bool bias);

    std::string describe() const override;
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override;
    const char* kind() const override { return "dense"; }
    int64_t paramCount() const override;
    void bindParams(float* params, float* grads) override;
    void initParams(Rng& rng) override;
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;
    bool fuseReLU() override { return fusedReLU_ = true; }

    int64_t inFeatures() const { return inFeatures_; }
    int64_t units() const { return units_; }
    bool hasBias() const { return hasBias_; }

private:
    struct Plan {
        dnnl::inner_product_forward fwd;
        dnnl::inner_product_backward_data bwdData;
        dnnl::inner_product_backward_weights bwdWeights;
        Tensor src;         // view of the (plain) input as [N, in]
        Tensor dst;         // [N, units]
        Tensor gradInput;   // [N, in] plain
        Tensor gradInputView;  // gradInput viewed with the input's original dims
        prof::OpStat* fwdOp = nullptr;  // per-op statistics of the three primitives
        prof::OpStat* bwdDataOp = nullptr;
        prof::OpStat* bwdWeightsOp = nullptr;
    };
    std::unique_ptr<Plan> makePlan(int64_t batch, bool training);

    int64_t inFeatures_;
    int64_t units_;
    bool hasBias_;
    bool fusedReLU_ = false;
    Tensor weights_, bias_, gradWeights_, gradBias_;  // views into the model's buffers
    PlanCache<Plan> plans_;
    Tensor* lastInput_ = nullptr;
    LayoutConverter toPlain_;
    LayoutConverter toPlainBack_;
};

}  // namespace trainbench::engine
