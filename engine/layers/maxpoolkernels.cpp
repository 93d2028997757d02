#include "engine/layers/maxpoolkernels.h"

#include <cstring>

#include "engine/util/vectorkernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TB_HAVE_AVX512 1
#else
#define TB_HAVE_AVX512 0
#endif

namespace trainbench::engine::kernels {

namespace {
constexpr int64_t kBlock = 16;

// With tiling windows every covered input element is written once by the backward pass; the rows
// and columns past the last window (when the size does not divide the input) get no gradient.
void zeroUncovered(float* gradSrc, const PoolShape& s) {
    const int64_t coveredH = s.outH * s.stride, coveredW = s.outW * s.stride;
    for (int64_t h = 0; h < s.inH; ++h) {
        const int64_t from = h < coveredH ? coveredW : 0;
        if (from < s.inW)
            std::memset(gradSrc + (h * s.inW + from) * kBlock, 0, static_cast<size_t>((s.inW - from) * kBlock) * sizeof(float));
    }
}

// One (image, channel block) plane: the 16 lanes are independent channels. These portable loops run
// where AVX-512 is missing; the AVX-512 versions below do each 16-lane loop in one instruction.
void forwardPlane(const float* __restrict src, float* __restrict dst, uint8_t* __restrict argmax, const PoolShape& s,
                  bool relu) {
    for (int64_t oh = 0; oh < s.outH; ++oh) {
        for (int64_t ow = 0; ow < s.outW; ++ow) {
            const float* first = src + ((oh * s.stride) * s.inW + ow * s.stride) * kBlock;
            float best[kBlock];
            uint8_t where[kBlock];
            for (int64_t c = 0; c < kBlock; ++c) {
                best[c] = first[c];
                where[c] = 0;
            }
            for (int64_t kh = 0; kh < s.size; ++kh) {
                for (int64_t kw = 0; kw < s.size; ++kw) {
                    if (kh == 0 && kw == 0) continue;
                    const float* v = first + (kh * s.inW + kw) * kBlock;
                    const auto pos = static_cast<uint8_t>(kh * s.size + kw);
                    for (int64_t c = 0; c < kBlock; ++c) {
                        const bool greater = v[c] > best[c];  // strictly: the first maximum wins ties
                        best[c] = greater ? v[c] : best[c];
                        where[c] = greater ? pos : where[c];
                    }
                }
            }
            float* out = dst + (oh * s.outW + ow) * kBlock;
            uint8_t* arg = argmax + (oh * s.outW + ow) * kBlock;
            for (int64_t c = 0; c < kBlock; ++c) {
                const bool dead = relu && !(best[c] > 0.0f);
                out[c] = dead ? 0.0f : best[c];
                arg[c] = dead ? kNoGradient : where[c];
            }
        }
    }
}

void backwardPlane(const float* __restrict gradDst, const uint8_t* __restrict argmax, float* __restrict gradSrc,
                   const PoolShape& s) {
    const bool tiled = s.stride == s.size;  // windows tile the input: each input element is written once
    if (!tiled) std::memset(gradSrc, 0, static_cast<size_t>(s.inH * s.inW * kBlock) * sizeof(float));
    for (int64_t oh = 0; oh < s.outH; ++oh) {
        for (int64_t ow = 0; ow < s.outW; ++ow) {
            const float* g = gradDst + (oh * s.outW + ow) * kBlock;
            const uint8_t* arg = argmax + (oh * s.outW + ow) * kBlock;
            float* first = gradSrc + ((oh * s.stride) * s.inW + ow * s.stride) * kBlock;
            for (int64_t kh = 0; kh < s.size; ++kh) {
                for (int64_t kw = 0; kw < s.size; ++kw) {
                    float* d = first + (kh * s.inW + kw) * kBlock;
                    const auto pos = static_cast<uint8_t>(kh * s.size + kw);
                    if (tiled) {
                        for (int64_t c = 0; c < kBlock; ++c) d[c] = arg[c] == pos ? g[c] : 0.0f;
                    } else {
                        for (int64_t c = 0; c < kBlock; ++c) d[c] += arg[c] == pos ? g[c] : 0.0f;
                    }
                }
            }
        }
    }
    if (tiled) zeroUncovered(gradSrc, s);
}
#if TB_HAVE_AVX512
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own "undefined" sources.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) void forwardPlaneAvx512(const float* src, float* dst, uint8_t* argmax,
                                                           const PoolShape& s, bool relu) {
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t oh = 0; oh < s.outH; ++oh) {
        for (int64_t ow = 0; ow < s.outW; ++ow) {
            const float* first = src + ((oh * s.stride) * s.inW + ow * s.stride) * kBlock;
            __m512 best = _mm512_loadu_ps(first);
            __m512i where = _mm512_setzero_si512();
            for (int64_t kh = 0; kh < s.size; ++kh) {
                for (int64_t kw = 0; kw < s.size; ++kw) {
                    if (kh == 0 && kw == 0) continue;
                    const __m512 v = _mm512_loadu_ps(first + (kh * s.inW + kw) * kBlock);
                    const __mmask16 greater = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ);  // first max wins ties
                    best = _mm512_mask_mov_ps(best, greater, v);
                    where = _mm512_mask_mov_epi32(where, greater, _mm512_set1_epi32(static_cast<int>(kh * s.size + kw)));
                }
            }
            if (relu) {
                const __mmask16 dead = _mm512_cmp_ps_mask(best, zero, _CMP_NGT_UQ);
                best = _mm512_mask_mov_ps(best, dead, zero);
                where = _mm512_mask_mov_epi32(where, dead, _mm512_set1_epi32(kNoGradient));
            }
            _mm512_storeu_ps(dst + (oh * s.outW + ow) * kBlock, best);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(argmax + (oh * s.outW + ow) * kBlock), _mm512_cvtepi32_epi8(where));
        }
    }
}

__attribute__((target("avx512f"))) void backwardPlaneAvx512(const float* gradDst, const uint8_t* argmax,
                                                            float* gradSrc, const PoolShape& s) {
    const bool tiled = s.stride == s.size;
    if (!tiled) std::memset(gradSrc, 0, static_cast<size_t>(s.inH * s.inW * kBlock) * sizeof(float));
    for (int64_t oh = 0; oh < s.outH; ++oh) {
        for (int64_t ow = 0; ow < s.outW; ++ow) {
            const __m512 g = _mm512_loadu_ps(gradDst + (oh * s.outW + ow) * kBlock);
            const __m512i arg = _mm512_cvtepu8_epi32(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(argmax + (oh * s.outW + ow) * kBlock)));
            float* first = gradSrc + ((oh * s.stride) * s.inW + ow * s.stride) * kBlock;
            for (int64_t kh = 0; kh < s.size; ++kh) {
                for (int64_t kw = 0; kw < s.size; ++kw) {
                    float* d = first + (kh * s.inW + kw) * kBlock;
                    const __mmask16 hit =
                        _mm512_cmpeq_epi32_mask(arg, _mm512_set1_epi32(static_cast<int>(kh * s.size + kw)));
                    if (tiled)
                        _mm512_storeu_ps(d, _mm512_maskz_mov_ps(hit, g));
                    else
                        _mm512_storeu_ps(d, _mm512_mask_add_ps(_mm512_loadu_ps(d), hit, _mm512_loadu_ps(d), g));
                }
            }
        }
    }
    if (tiled) zeroUncovered(gradSrc, s);
}
#pragma GCC diagnostic pop

bool gPortable = false;
bool haveAvx512() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes && !gPortable;
}
#else
bool gPortable = false;
bool haveAvx512() { return false; }
#endif

}  // namespace

void usePortablePoolingForTesting(bool portable) { gPortable = portable; }

void maxPoolForward(const float* src, float* dst, uint8_t* argmax, const PoolShape& s, bool relu) {
    const int64_t inPlane = s.inH * s.inW * kBlock, outPlane = s.outH * s.outW * kBlock;
    parallelFor(static_cast<size_t>(s.batch * s.channelBlocks), 1, [&](size_t b, size_t e) {
        for (size_t p = b; p < e; ++p) {
            const auto i = static_cast<int64_t>(p);
#if TB_HAVE_AVX512
            if (haveAvx512()) {
                forwardPlaneAvx512(src + i * inPlane, dst + i * outPlane, argmax + i * outPlane, s, relu);
                continue;
            }
#endif
            forwardPlane(src + i * inPlane, dst + i * outPlane, argmax + i * outPlane, s, relu);
        }
    });
}

void maxPoolBackward(const float* gradDst, const uint8_t* argmax, float* gradSrc, const PoolShape& s) {
    const int64_t inPlane = s.inH * s.inW * kBlock, outPlane = s.outH * s.outW * kBlock;
    parallelFor(static_cast<size_t>(s.batch * s.channelBlocks), 1, [&](size_t b, size_t e) {
        for (size_t p = b; p < e; ++p) {
            const auto i = static_cast<int64_t>(p);
#if TB_HAVE_AVX512
            if (haveAvx512()) {
                backwardPlaneAvx512(gradDst + i * outPlane, argmax + i * outPlane, gradSrc + i * inPlane, s);
                continue;
            }
#endif
            backwardPlane(gradDst + i * outPlane, argmax + i * outPlane, gradSrc + i * inPlane, s);
        }
    });
}

}  // namespace trainbench::engine::kernels
