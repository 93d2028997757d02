#pragma once
// One op of a training step as an emulated device's cost model sees it: what it does, from shapes
// alone (no tensors are allocated), so that a step can be timed on hardware this machine does not
// have, and a model too large to train here can still be estimated (trainbench-cli estimate).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/instrument/opstats.h"

namespace trainbench::engine {

// The part of a training step an op belongs to (the step breakdown's categories).
enum class StepPart { Forward, Backward, Optimizer };

// A matrix product C[m x n] = A[m x k] * B[k x n] as the op runs it: an inner product, or a
// convolution as an implicit GEMM. Matrix units (a TPU's 128x128 MXUs) pad these dimensions, which
// is why they are kept apart from the FLOPs. All zero when the op is not a matrix product.
struct MatrixShape {
    int64_t m = 0;
    int64_t n = 0;
    int64_t k = 0;
    bool empty() const { return m == 0 || n == 0 || k == 0; }
};

struct OpDesc {
    std::string layer;     // the layer it belongs to, e.g. "conv2d_3" or "bottleneck_2/conv_b"
    prof::OpCost cost;     // kind, shape, FLOPs and bytes of one call (as the per-op statistics count them)
    StepPart part = StepPart::Forward;
    MatrixShape matrix;    // for matrix products; empty otherwise
    int64_t calls = 1;     // calls per training step

    OpDesc() = default;
    OpDesc(prof::OpCost c, StepPart p, MatrixShape m = {}) : cost(std::move(c)), part(p), matrix(m) {}
};

// Whether the op reads or writes the parameters, their gradients or the optimizer state: matrix
// products (weights, weight gradients) and optimizer updates. The calibrated host charges their
// bytes by where the parameters are (kernelrates.h).
inline bool touchesParameters(const OpDesc& op) { return op.part == StepPart::Optimizer || !op.matrix.empty(); }

// Every op of one training step of one replica at a given per-replica batch.
struct OpGraph {
    int64_t batch = 0;
    std::vector<OpDesc> ops;
    // Footprint by shapes, bytes (what MemoryFootprint records for a real run).
    double params_bytes = 0.0;
    double grads_bytes = 0.0;
    double optimizer_bytes = 0.0;
    double activation_bytes = 0.0;
    int64_t param_count = 0;
    // Parameters of each layer that has any, last layer first: the order in which backward finishes
    // their gradients and the gradient exchange buckets them (GradientSync::plan).
    std::vector<int64_t> layer_params;
};

}  // namespace trainbench::engine
