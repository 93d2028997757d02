#pragma once
// Softmax followed by cross-entropy against integer labels, fused: the gradient w.r.t. the logits is
// simply (softmax - onehot) / N, which is both cheaper and more stable than chaining the two.
#include <cstdint>

#include "engine/tensor/tensor.h"

namespace trainbench::engine {

struct LossResult {
    double loss = 0.0;    // mean over the batch
    int64_t correct = 0;  // examples whose arg-max logit equals the label
};

class SoftmaxCrossEntropy {
public:
    // logits: plain [N, C]; labels: N values in [0, C). If gradLogits is non-null (plain [N, C]) it
    // receives d(mean loss)/d(logits).
    static LossResult compute(const Tensor& logits, const int32_t* labels, Tensor* gradLogits);
    static LossResult compute(const float* logits, int64_t n, int64_t classes, const int32_t* labels,
                              float* gradLogits);
};

}  // namespace trainbench::engine
