#include "engine/layers/softmaxcrossentropy.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainbench::engine {

LossResult SoftmaxCrossEntropy::compute(const Tensor& logits, const int32_t* labels, Tensor* gradLogits,
                                        int64_t gradDivisor) {
    Dims d = logits.dims();
    return compute(logits.data(), d[0], d[1], labels, gradLogits ? gradLogits->data() : nullptr, gradDivisor);
}

LossResult SoftmaxCrossEntropy::compute(const float* logits, int64_t n, int64_t classes, const int32_t* labels,
                                        float* gradLogits, int64_t gradDivisor) {
    LossResult r;
    double total = 0.0;
    const float invN = 1.0f / static_cast<float>(gradDivisor > 0 ? gradDivisor : n);
    std::vector<float> e(static_cast<size_t>(classes));
    for (int64_t i = 0; i < n; ++i) {
        const float* z = logits + i * classes;
        const int32_t y = labels[i];
        if (y < 0 || y >= classes)
            throw std::out_of_range("label " + std::to_string(y) + " of example " + std::to_string(i) +
                                    " is outside [0, " + std::to_string(classes) + ")");
        int64_t arg = 0;
        float zmax = z[0];
        for (int64_t c = 1; c < classes; ++c)
            if (z[c] > zmax) { zmax = z[c]; arg = c; }
        if (arg == y) ++r.correct;
        // exp of logits shifted by their max, so nothing overflows; computed once, used twice.
        float sum = 0.0f;
        for (int64_t c = 0; c < classes; ++c) {
            e[static_cast<size_t>(c)] = std::exp(z[c] - zmax);
            sum += e[static_cast<size_t>(c)];
        }
        total += static_cast<double>(std::log(sum) - (z[y] - zmax));
        if (gradLogits) {
            float* g = gradLogits + i * classes;
            const float scale = invN / sum;
            for (int64_t c = 0; c < classes; ++c) g[c] = e[static_cast<size_t>(c)] * scale;
            g[y] -= invN;
        }
    }
    r.loss = total / static_cast<double>(n);
    return r;
}

}  // namespace trainbench::engine
