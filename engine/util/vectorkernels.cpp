#include "engine/util/vectorkernels.h"

#include <cmath>

// GCC/Clang function multi-versioning: one clone per ISA, chosen by an ifunc resolver at load time.
// Not under ASan or TSan: the ifunc resolver is instrumented too and runs during relocation, before
// the sanitizer runtime is initialised (a TSan build segfaults in the resolver before main).
#if defined(__SANITIZE_THREAD__)
#define TB_NO_MULTIVERSION 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TB_NO_MULTIVERSION 1
#endif
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) && !defined(TB_NO_MULTIVERSION)
#define TB_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TB_MULTIVERSION
#endif

namespace trainbench::engine::kernels {

// Adam reads 4 and writes 3 floats per parameter: it runs at the cache's bandwidth (~50 GB/s per
// core from L2 here), so hand-written estimates of sqrt and 1/x bought nothing and are not used.
TB_MULTIVERSION
void adam(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, size_t begin,
          size_t end, const AdamScalars& s) {
    const float b1 = s.beta1, b2 = s.beta2, c1 = 1.0f - s.beta1, c2 = 1.0f - s.beta2;
    const float eps = s.eps, wd = s.weightDecay, step = s.stepSize, inv = s.invSqrtBc2;
    for (size_t i = begin; i < end; ++i) {
        const float gi = g[i] + wd * p[i];
        const float mi = b1 * m[i] + c1 * gi;
        const float vi = b2 * v[i] + c2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] -= step * mi / (std::sqrt(vi) * inv + eps);
    }
}



TB_MULTIVERSION
void sgd(float* __restrict p, const float* __restrict g, size_t begin, size_t end, float lr, float wd) {
    for (size_t i = begin; i < end; ++i) p[i] -= lr * (g[i] + wd * p[i]);
}

TB_MULTIVERSION
void sgdMomentum(float* __restrict p, const float* __restrict g, float* __restrict v, size_t begin, size_t end,
                 float lr, float wd, float mu, bool nesterov, bool first) {
    const float keep = first ? 0.0f : mu;  // v = g on the first step
    for (size_t i = begin; i < end; ++i) {
        const float gi = g[i] + wd * p[i];
        const float vi = keep * v[i] + gi;
        v[i] = vi;
        p[i] -= lr * (nesterov ? gi + mu * vi : vi);
    }
}

TB_MULTIVERSION
void scaleBytes(const uint8_t* __restrict src, float* __restrict dst, size_t count, float scale) {
    for (size_t i = 0; i < count; ++i) dst[i] = static_cast<float>(src[i]) * scale;
}

}  // namespace trainbench::engine::kernels
