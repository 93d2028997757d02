#pragma once
// FLOPs and bytes of one call of each op, from its shapes: what the per-op statistics and the
// roofline divide by. Bytes count each tensor read or written once (the compulsory traffic), so an
// op's achieved GB/s is a lower bound on the traffic it really caused.
#include <cstdint>

#include "engine/instrument/opstats.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine::opcost {

enum class Pass { Forward, BackwardData, BackwardWeights };

// Dense [batch, in] x [out, in]^T (+ bias) (+ ReLU post-op).
prof::OpCost innerProduct(Pass pass, int64_t batch, int64_t in, int64_t out, bool bias, bool relu);
// Convolution of src [N, C, H, W] into dst [N, K, OH, OW] with kernels of `kernel` x `kernelW` (0:
// square), in `group` independent groups (depthwise: group = C): each output reads C / group input
// channels. Dilation changes which inputs a kernel reads, not how many: it costs nothing here.
prof::OpCost convolution(Pass pass, const Dims& src, const Dims& dst, int64_t kernel, bool bias, bool relu,
                         int64_t group = 1, int64_t kernelW = 0);
// Max pooling of src into dst with windows of `window` x `windowW` (0: square) (forward: one
// comparison per window element; backward: one add per output).
prof::OpCost maxPooling(bool forward, const Dims& src, const Dims& dst, int64_t window, bool relu, int64_t windowW = 0);
// Batch normalisation of data [N, C, ...] per channel over all other dimensions, one call (with
// statistics shards, one call per shard: pass the shard's dims). Counted per element: training
// forward 6 FLOPs (mean 1, variance 3, then x * a + b 2), inference 2, backward 10 (sum of dy 1,
// sum of dy * (x - mean) 3, diff_src 6); +1 with a fused ReLU. Bytes: data in and out once, the
// per-channel vectors (scale, shift, mean, variance and their gradients), and a fused ReLU's mask at
// one bit per element (oneDNN's workspace).
enum class NormPass { ForwardTraining, ForwardInference, Backward };
prof::OpCost batchNorm(NormPass pass, const Dims& data, bool relu);
// Average pooling of src [N, C, H, W] over its whole spatial extent into [N, C]: forward one add per
// input element and one divide per output, backward one multiply per input element.
prof::OpCost globalAvgPooling(bool forward, const Dims& src);
// Element-wise sum of two tensors of `dims` into a third (a residual connection; + ReLU post-op).
prof::OpCost binaryAdd(const Dims& dims, bool relu);
// Element-wise op over `elements` floats touching `tensors` tensors of that size, `flopsPerElement` each.
prof::OpCost elementwise(const char* kind, const Dims& dims, int tensors, double flopsPerElement);
// A layout conversion (oneDNN reorder).
prof::OpCost reorder(const Dims& dims, int64_t bytesIn, int64_t bytesOut);
// An optimizer update over `params` parameters.
prof::OpCost optimizerUpdate(const char* kind, int64_t params, double flopsPerParam, double bytesPerParam);

}  // namespace trainbench::engine::opcost
