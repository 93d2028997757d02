#pragma once
// Inverted dropout: in training each activation is zeroed with probability `rate` and the survivors
// scaled by 1/(1-rate); in evaluation it is the identity. The mask is drawn from a seed given per step,
// so a run is reproducible.
#include <map>

#include "engine/layers/layer.h"

namespace trainbench::engine {

class Dropout : public Layer {
public:
    Dropout(CpuDevice& device, Dims sampleShape, float rate);

    std::string describe() const override;
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override;
    const char* kind() const override { return "dropout"; }
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;
    void setStepSeed(uint64_t seed) override { stepSeed_ = seed; }

private:
    float rate_;
    uint64_t stepSeed_ = 0;
    AlignedBuffer mask_;  // 0 or 1/(1-rate) per element of the last training forward
    // Per-op statistics, per batch size: forward (mask draw and multiply) and backward.
    struct Ops {
        prof::OpStat* fwd = nullptr;
        prof::OpStat* bwd = nullptr;
    };
    Ops& opsFor(const Tensor& t);
    std::map<int64_t, Ops> ops_;
    Ops* current_ = nullptr;
};

}  // namespace trainbench::engine
