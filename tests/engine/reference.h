#pragma once
// Helpers shared by the engine's numeric tests: moving values in and out of tensors of any layout,
// seeded test data, double-precision naive references of the layers, and finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/layers/layoutconverter.h"
#include "engine/tensor/tensor.h"
#include "engine/util/rng.h"

namespace trainbench::engine::testref {

using Values = std::vector<float>;
using Doubles = std::vector<double>;
using tag = dnnl::memory::format_tag;

inline int64_t product(const Dims& d) {
    return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<>());
}

inline dnnl::memory::desc plain(const Dims& d) { return Tensor::plainDesc(d); }
// A blocked layout of the kind oneDNN picks for convolutions: channels in blocks of 16, zero-padded.
inline dnnl::memory::desc blocked16(const Dims& d) {
    return dnnl::memory::desc(d, dnnl::memory::data_type::f32, tag::nChw16c);
}

// The values of t in plain row-major order, whatever its layout.
inline Values toVector(Tensor& t, CpuDevice& dev) {
    LayoutConverter conv;
    Tensor& p = conv.convert(t, plain(t.dims()), dev);
    dev.stream().wait();
    return Values(p.data(), p.data() + t.elements());
}

// A new tensor of layout `desc` holding `values`, which are given in plain row-major order.
inline Tensor fromVector(const Values& values, const dnnl::memory::desc& desc, CpuDevice& dev) {
    Tensor p(plain(desc.dims()), dev.engine());
    EXPECT_EQ(static_cast<int64_t>(values.size()), p.elements());
    std::copy(values.begin(), values.end(), p.data());
    if (desc == p.desc()) return p;
    Tensor out(desc, dev.engine());
    dnnl::reorder(p.mem(), out.mem()).execute(dev.stream(), p.mem(), out.mem());
    dev.stream().wait();
    return out;
}

inline Values randomValues(int64_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
    Rng rng(seed);
    Values v(static_cast<size_t>(n));
    for (float& x : v) x = rng.uniform(lo, hi);
    return v;
}

// n distinct values `gap` apart, centred on 0, in a random order: no ties or near-ties for max pooling.
inline Values distinctValues(int64_t n, uint64_t seed, float gap) {
    Values v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = gap * static_cast<float>(i - n / 2);
    Rng rng(seed);
    for (int64_t i = n - 1; i > 0; --i) std::swap(v[static_cast<size_t>(i)], v[rng.below(static_cast<uint64_t>(i + 1))]);
    return v;
}

// Random values at least `margin` away from 0 (for ReLU's kink).
inline Values awayFromZero(int64_t n, uint64_t seed, float margin) {
    Values v = randomValues(n, seed, margin, 1.0f);
    Rng rng(seed ^ 0x5eedull);
    for (float& x : v)
        if (rng.below(2)) x = -x;
    return v;
}

inline double weightedSum(const Values& y, const Values& w) {
    double s = 0.0;
    for (size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y[i]) * static_cast<double>(w[i]);
    return s;
}

// Names parameterised tests after the `name` field of their case.
struct CaseName {
    template <typename Case>
    std::string operator()(const ::testing::TestParamInfo<Case>& c) const { return c.param.name; }
};

// ---- naive references (double precision, plain row-major) ----

// y[n, o] = sum_i x[n, i] W[o, i] + b[o]
inline Doubles denseRef(const Values& x, const Values& W, const Values& b, int64_t n, int64_t in, int64_t out) {
    Doubles y(static_cast<size_t>(n * out));
    for (int64_t r = 0; r < n; ++r)
        for (int64_t o = 0; o < out; ++o) {
            double s = b.empty() ? 0.0 : b[static_cast<size_t>(o)];
            for (int64_t i = 0; i < in; ++i)
                s += static_cast<double>(x[static_cast<size_t>(r * in + i)]) * W[static_cast<size_t>(o * in + i)];
            y[static_cast<size_t>(r * out + o)] = s;
        }
    return y;
}

struct ConvShape {
    int64_t n, c, h, w, f, k, stride, pad;
    int64_t oh() const { return (h + 2 * pad - k) / stride + 1; }
    int64_t ow() const { return (w + 2 * pad - k) / stride + 1; }
    Dims inDims() const { return {n, c, h, w}; }
    Dims outDims() const { return {n, f, oh(), ow()}; }
    Dims weightDims() const { return {f, c, k, k}; }
    // Calls fn(xIndex, wIndex, yIndex) for every multiply-add of the convolution.
    template <typename Fn>
    void forEachTap(Fn&& fn) const {
        for (int64_t b = 0; b < n; ++b)
            for (int64_t o = 0; o < f; ++o)
                for (int64_t y = 0; y < oh(); ++y)
                    for (int64_t x = 0; x < ow(); ++x)
                        for (int64_t ch = 0; ch < c; ++ch)
                            for (int64_t i = 0; i < k; ++i)
                                for (int64_t j = 0; j < k; ++j) {
                                    const int64_t iy = y * stride + i - pad, ix = x * stride + j - pad;
                                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                    fn(((b * c + ch) * h + iy) * w + ix, ((o * c + ch) * k + i) * k + j,
                                       ((b * f + o) * oh() + y) * ow() + x);
                                }
    }
};

inline Doubles convRef(const ConvShape& s, const Values& x, const Values& W, const Values& b) {
    Doubles y(static_cast<size_t>(product(s.outDims())));
    for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i)
        y[static_cast<size_t>(i)] = b.empty() ? 0.0 : b[static_cast<size_t>((i / (s.oh() * s.ow())) % s.f)];
    s.forEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
        y[static_cast<size_t>(yi)] += static_cast<double>(x[static_cast<size_t>(xi)]) * W[static_cast<size_t>(wi)];
    });
    return y;
}

// Gradients of sum(g * conv(x)) w.r.t. x, W and b.
struct ConvGrads { Doubles dx, dw, db; };
inline ConvGrads convBackwardRef(const ConvShape& s, const Values& x, const Values& W, const Values& g) {
    ConvGrads r{Doubles(x.size()), Doubles(W.size()), Doubles(static_cast<size_t>(s.f))};
    s.forEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
        r.dx[static_cast<size_t>(xi)] += static_cast<double>(g[static_cast<size_t>(yi)]) * W[static_cast<size_t>(wi)];
        r.dw[static_cast<size_t>(wi)] += static_cast<double>(g[static_cast<size_t>(yi)]) * x[static_cast<size_t>(xi)];
    });
    for (size_t i = 0; i < g.size(); ++i) r.db[(i / static_cast<size_t>(s.oh() * s.ow())) % static_cast<size_t>(s.f)] += g[i];
    return r;
}

// Max over size x size windows, no padding, on plain [n, c, h, w].
inline Doubles maxPoolRef(const Values& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t size, int64_t stride) {
    const int64_t oh = (h - size) / stride + 1, ow = (w - size) / stride + 1;
    Doubles y;
    for (int64_t p = 0; p < n * c; ++p)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
                double m = -INFINITY;
                for (int64_t i = 0; i < size; ++i)
                    for (int64_t j = 0; j < size; ++j)
                        m = std::max(m, static_cast<double>(x[static_cast<size_t>((p * h + oy * stride + i) * w + ox * stride + j)]));
                y.push_back(m);
            }
    return y;
}

// ---- comparisons ----

// Every element within atol + rtol * |want|; reports the count and the worst element.
inline ::testing::AssertionResult allNear(const Doubles& want, const Values& got, double rtol, double atol) {
    if (want.size() != got.size())
        return ::testing::AssertionFailure() << "size " << got.size() << ", expected " << want.size();
    size_t bad = 0, worst = 0;
    double worstExcess = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double err = std::abs(static_cast<double>(got[i]) - want[i]);
        const double excess = err - (atol + rtol * std::abs(want[i]));
        if (!(excess <= 0.0)) {  // also catches NaN
            if (bad == 0 || excess > worstExcess || std::isnan(excess)) { worst = i; worstExcess = excess; }
            ++bad;
        }
    }
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << bad << " of " << want.size() << " elements differ; worst at " << worst
                                         << ": got " << got[worst] << ", expected " << want[worst];
}
inline ::testing::AssertionResult allNear(const Values& want, const Values& got, double rtol, double atol) {
    return allNear(Doubles(want.begin(), want.end()), got, rtol, atol);
}

// ---- finite differences ----

// Central differences of f with respect to each of v[0..n) (perturbed in place, then restored).
// A coordinate whose one-sided slopes disagree by more than kinkTol (absolute, plus 1% relative) sits
// on a kink (ReLU, a max-pool switch); it is marked NaN so the caller can skip it instead of comparing
// against a meaningless slope. kinkTol = 0 checks nothing. An undetected kink moves the central
// difference by at most half the slope disagreement, so kinkTol / 2 + 0.5% bounds that error.
inline Doubles centralDiffs(float* v, size_t n, float h, const std::function<double()>& f, double kinkTol = 0.0) {
    Doubles d(n);
    const double f0 = kinkTol > 0.0 ? f() : 0.0;
    for (size_t i = 0; i < n; ++i) {
        const float orig = v[i];
        const float up = orig + h, down = orig - h;
        v[i] = up;
        const double fUp = f();
        v[i] = down;
        const double fDown = f();
        v[i] = orig;
        d[i] = (fUp - fDown) / (static_cast<double>(up) - static_cast<double>(down));
        if (kinkTol > 0.0) {
            const double right = (fUp - f0) / (static_cast<double>(up) - orig);
            const double left = (f0 - fDown) / (static_cast<double>(orig) - down);
            if (std::abs(right - left) > kinkTol + 0.01 * std::abs(d[i])) d[i] = NAN;
        }
    }
    return d;
}
inline Doubles centralDiffs(Values& v, float h, const std::function<double()>& f, double kinkTol = 0.0) {
    return centralDiffs(v.data(), v.size(), h, f, kinkTol);
}

// Compares analytic gradients with finite differences, skipping NaN (kink) coordinates; at most
// `maxSkipped` of them may be skipped.
inline ::testing::AssertionResult gradNear(const Doubles& numeric, const Values& analytic, double rtol, double atol,
                                           size_t maxSkipped = 0) {
    Doubles want;
    Values got;
    size_t skipped = 0;
    for (size_t i = 0; i < numeric.size() && i < analytic.size(); ++i) {
        if (std::isnan(numeric[i])) { ++skipped; continue; }
        want.push_back(numeric[i]);
        got.push_back(analytic[i]);
    }
    if (numeric.size() != analytic.size())
        return ::testing::AssertionFailure() << "gradient has " << analytic.size() << " elements, expected "
                                             << numeric.size();
    if (skipped > maxSkipped)
        return ::testing::AssertionFailure() << skipped << " coordinates sit on kinks (at most " << maxSkipped
                                             << " allowed)";
    return allNear(want, got, rtol, atol);
}

}  // namespace trainbench::engine::testref
