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
    // receives d(mean loss)/d(logits). The loss returned is the mean over the N examples; the
    // gradient is of the sum of losses over `gradDivisor` (0: N). A replica holding N of a global
    // batch of B passes B, so that summing the replicas' gradients gives the global batch's mean.
    static LossResult compute(const Tensor& logits, const int32_t* labels, Tensor* gradLogits, int64_t gradDivisor = 0);
    static LossResult compute(const float* logits, int64_t n, int64_t classes, const int32_t* labels,
                              float* gradLogits, int64_t gradDivisor = 0);
};

}  // namespace trainbench::engine
