#pragma once
// Helpers of the batch norm and residual-block tests: double-precision naive references (batch norm,
// padded max pooling, global average pooling, the bottleneck block) on plain row-major data, and a
// finite-difference check of a layer's backward with tolerances the caller states.
#include <cmath>
#include <vector>

#include "engine/layers/layer.h"
#include "tests/engine/reference.h"

namespace trainbench::engine::testref {

inline Dims withBatch(int64_t n, const Dims& sample) {
    Dims d{n};
    d.insert(d.end(), sample.begin(), sample.end());
    return d;
}

// Batch norm of plain [n, c, spatial...] per channel. With mean/variance given (inference) they are
// used; otherwise the batch's own (biased variance) are computed and returned.
struct BatchNormRef {
    Doubles y, mean, variance;
};
template <typename T>
BatchNormRef batchNormRef(const std::vector<T>& x, int64_t n, int64_t c, int64_t spatial, const Values& gamma,
                                 const Values& beta, double eps, const Doubles* mean = nullptr,
                                 const Doubles* variance = nullptr, bool relu = false) {
    BatchNormRef r{Doubles(x.size()), Doubles(static_cast<size_t>(c)), Doubles(static_cast<size_t>(c))};
    auto at = [&](int64_t b, int64_t ch, int64_t s) { return static_cast<size_t>((b * c + ch) * spatial + s); };
    for (int64_t ch = 0; ch < c; ++ch) {
        const size_t k = static_cast<size_t>(ch);
        if (mean) {
            r.mean[k] = (*mean)[k];
            r.variance[k] = (*variance)[k];
        } else {
            double sum = 0.0;
            for (int64_t b = 0; b < n; ++b)
                for (int64_t s = 0; s < spatial; ++s) sum += x[at(b, ch, s)];
            r.mean[k] = sum / static_cast<double>(n * spatial);
            double sq = 0.0;
            for (int64_t b = 0; b < n; ++b)
                for (int64_t s = 0; s < spatial; ++s) sq += (x[at(b, ch, s)] - r.mean[k]) * (x[at(b, ch, s)] - r.mean[k]);
            r.variance[k] = sq / static_cast<double>(n * spatial);
        }
        const double inv = 1.0 / std::sqrt(r.variance[k] + eps);
        for (int64_t b = 0; b < n; ++b)
            for (int64_t s = 0; s < spatial; ++s) {
                const double v = (x[at(b, ch, s)] - r.mean[k]) * inv * gamma[k] + beta[k];
                r.y[at(b, ch, s)] = relu ? std::max(v, 0.0) : v;
            }
    }
    return r;
}

// Max over size x size windows with `pad` ignored cells on each side, on plain [n, c, h, w].
inline Doubles paddedMaxPoolRef(const Values& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t size,
                                int64_t stride, int64_t pad) {
    const int64_t oh = (h + 2 * pad - size) / stride + 1, ow = (w + 2 * pad - size) / stride + 1;
    Doubles y;
    for (int64_t p = 0; p < n * c; ++p)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
                double m = -INFINITY;
                for (int64_t i = 0; i < size; ++i)
                    for (int64_t j = 0; j < size; ++j) {
                        const int64_t iy = oy * stride + i - pad, ix = ox * stride + j - pad;
                        if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                            m = std::max(m, static_cast<double>(x[static_cast<size_t>((p * h + iy) * w + ix)]));
                    }
                y.push_back(m);
            }
    return y;
}

// Convolution without bias, all in double (no rounding of intermediates to float).
inline Doubles convRefDouble(const ConvShape& s, const Doubles& x, const Values& W) {
    Doubles y(static_cast<size_t>(product(s.outDims())), 0.0);
    s.forEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
        y[static_cast<size_t>(yi)] += x[static_cast<size_t>(xi)] * W[static_cast<size_t>(wi)];
    });
    return y;
}

// The bottleneck block on plain [n, c, h, w] in training mode (batch statistics, gamma and beta as
// given), built from the references above, in double throughout: conv 1x1 -> BN -> ReLU -> conv 3x3
// -> BN -> ReLU -> conv 1x1 -> BN, plus the shortcut (identity or conv 1x1 -> BN), then ReLU.
// `params` in the block's order: conv_a, bn_a (gamma, beta), conv_b, bn_b, conv_c, bn_c[,
// conv_shortcut, bn_shortcut].
template <typename T>
Doubles bottleneckRef(const std::vector<T>& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t width,
                      int64_t stride, const Values& params, double eps) {
    size_t at = 0;
    auto take = [&](int64_t count) {
        const auto from = params.begin() + static_cast<std::ptrdiff_t>(at);
        at += static_cast<size_t>(count);
        return Values(from, from + count);
    };
    auto convBn = [&](const Doubles& in, const ConvShape& s, bool relu) {
        const Values wts = take(s.f * s.c * s.k * s.k), gamma = take(s.f), beta = take(s.f);
        return batchNormRef(convRefDouble(s, in, wts), s.n, s.f, s.oh() * s.ow(), gamma, beta, eps, nullptr, nullptr,
                            relu).y;
    };
    const Doubles xd(x.begin(), x.end());
    const ConvShape a{n, c, h, w, width, 1, 1, 0};
    const ConvShape b{n, width, h, w, width, 3, stride, 1};
    const ConvShape cs{n, width, b.oh(), b.ow(), 4 * width, 1, 1, 0};
    Doubles y = convBn(convBn(convBn(xd, a, true), b, true), cs, false);
    if (stride != 1 || c != 4 * width) {
        const Doubles s = convBn(xd, ConvShape{n, c, h, w, 4 * width, 1, stride, 0}, false);
        for (size_t i = 0; i < y.size(); ++i) y[i] += s[i];
    } else {
        for (size_t i = 0; i < y.size(); ++i) y[i] += xd[i];
    }
    for (double& v : y) v = std::max(v, 0.0);
    return y;
}

// How closely a layer's backward must match central differences of L = sum(w * forward(x)).
struct GradCheck {
    float step = 1e-2f;
    double rtol = 1e-2, atol = 1e-3;
    double kinkTol = 0.0;    // > 0: skip coordinates on a kink (centralDiffs), at most maxSkipped
    size_t maxSkipped = 0;
};

// Checks layer.backward after a training forward at x (plain values, fed in layout inDesc) against
// central differences w.r.t. x and the bound parameters; the input gradient must come back in the
// input's layout and the parameter gradients must overwrite the buffer.
inline void expectBackwardMatchesFiniteDifferences(Layer& layer, CpuDevice& dev, Values x,
                                                   const dnnl::memory::desc& inDesc, Values& params, Values& grads,
                                                   uint64_t seed, const GradCheck& check) {
    const Values w = randomValues(product(withBatch(inDesc.dims()[0], layer.outputShape())), seed);
    auto loss = [&] {
        Tensor in = fromVector(x, inDesc, dev);
        return weightedSum(toVector(layer.forward(in, true), dev), w);
    };
    const Doubles numX = centralDiffs(x, check.step, loss, check.kinkTol);
    const Doubles numP = centralDiffs(params, check.step, loss, check.kinkTol);

    std::fill(grads.begin(), grads.end(), 12345.0f);
    Tensor in = fromVector(x, inDesc, dev);
    Tensor& y = layer.forward(in, true);
    Tensor gy = fromVector(w, y.desc(), dev);
    Tensor* gx = layer.backward(gy);
    dev.stream().wait();
    ASSERT_NE(gx, nullptr);
    EXPECT_TRUE(gx->desc() == inDesc) << "the input gradient must come back in the input's layout";
    EXPECT_TRUE(gradNear(numX, toVector(*gx, dev), check.rtol, check.atol, check.maxSkipped)) << "input gradient";
    EXPECT_TRUE(gradNear(numP, grads, check.rtol, check.atol, check.maxSkipped)) << "parameter gradients";
}

}  // namespace trainbench::engine::testref
