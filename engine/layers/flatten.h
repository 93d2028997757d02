#pragma once
// [N, C, H, W] -> [N, C*H*W] in PyTorch's (channel-major) order. Free for plain inputs (a view);
// inputs in a blocked layout are reordered to plain first, and gradients reordered back.
#include "engine/layers/layer.h"
#include "engine/layers/layoutconverter.h"

namespace trainbench::engine {

class Flatten : public Layer {
public:
    Flatten(CpuDevice& device, Dims sampleShape);

    std::string describe() const override;
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override;
    const char* kind() const override { return "flatten"; }
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;

private:
    LayoutConverter toPlain_, toInputLayout_;
    Tensor outputView_, gradView_;
    Tensor* lastInput_ = nullptr;
};

}  // namespace trainbench::engine
