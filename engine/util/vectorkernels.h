#pragma once
// Element-wise kernels on the training hot path (optimizer updates, pixel scaling, dropout masks).
// Each is compiled for AVX-512, AVX2 and baseline x86-64 and picked at load time for the CPU, so one
// binary is fast on a new Xeon and still runs on an old laptop. They work on a range [begin, end) and
// are parallelised by the caller with parallelFor.
#include <cstddef>
#include <cstdint>

namespace trainbench::engine::kernels {

struct AdamScalars {
    float beta1, beta2, eps, weightDecay;
    float stepSize;    // lr / (1 - beta1^t)
    float invSqrtBc2;  // 1 / sqrt(1 - beta2^t)
};
void adam(float* p, const float* g, float* m, float* v, size_t begin, size_t end, const AdamScalars& s);

// SGD without momentum: p -= lr * (g + wd * p).
void sgd(float* p, const float* g, size_t begin, size_t end, float lr, float wd);
// SGD with momentum; first: v = g instead of mu*v + g.
void sgdMomentum(float* p, const float* g, float* v, size_t begin, size_t end, float lr, float wd, float mu,
                 bool nesterov, bool first);

// dst[i] = src[i] * scale for u8 pixels.
void scaleBytes(const uint8_t* src, float* dst, size_t count, float scale);

// Runs fn(begin, end) over [0, n) split into one contiguous chunk per OpenMP thread (of at least
// `grain` elements each), so each kernel call sees a long stretch it can vectorise.
template <typename Fn>
void parallelFor(size_t n, size_t grain, Fn&& fn);

}  // namespace trainbench::engine::kernels

#include "engine/util/parallelfor.inl"
