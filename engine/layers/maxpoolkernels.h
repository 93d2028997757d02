#pragma once
// Max pooling on oneDNN's 16-channel-blocked activation layout (aBcd16b: [N][C/16][H][W][16]), with an
// optional ReLU fused in. oneDNN 2.6's own pooling moved W2's largest activation at ~5-8 GB/s and took
// a quarter of the step; these kernels make one pass in each direction, 16 channels per vector.
#include <cstddef>
#include <cstdint>

namespace trainbench::engine::kernels {

struct PoolShape {
    int64_t batch, channelBlocks;  // channel blocks of 16 (the layout pads C up to a multiple of 16)
    int64_t inH, inW, outH, outW;
    int64_t size, stride;          // square window, no padding
};

// Marks an output element whose window maximum was <= 0 with a fused ReLU: it outputs 0 and gets no
// gradient (ReLU'(x) = 0 for x <= 0).
inline constexpr uint8_t kNoGradient = 255;

// dst = max over each window (then max(., 0) if relu); argmax[i] = position of the first maximum in
// the window (row-major, < size*size <= 254) or kNoGradient.
void maxPoolForward(const float* src, float* dst, uint8_t* argmax, const PoolShape& s, bool relu);
// gradSrc = the gradient routed back to each window's arg-max (summed where windows overlap), 0 elsewhere.
void maxPoolBackward(const float* gradDst, const uint8_t* argmax, float* gradSrc, const PoolShape& s);

// Tests only: run the portable loops even where AVX-512 is available, so both paths are checked.
void usePortablePoolingForTesting(bool portable);

}  // namespace trainbench::engine::kernels
