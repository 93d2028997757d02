#include "engine/layers/opcosts.h"

namespace trainbench::engine::opcost {

namespace {
constexpr double kF = sizeof(float);
double product(const Dims& d) {
    double p = 1.0;
    for (int64_t x : d) p *= static_cast<double>(x);
    return p;
}
const char* passName(Pass pass, const char* forward, const char* data, const char* weights) {
    return pass == Pass::Forward ? forward : pass == Pass::BackwardData ? data : weights;
}
}  // namespace

prof::OpCost innerProduct(Pass pass, int64_t batch, int64_t in, int64_t out, bool bias, bool relu) {
    const double b = static_cast<double>(batch), i = static_cast<double>(in), o = static_cast<double>(out);
    prof::OpCost c;
    c.kind = passName(pass, "inner_product_forward", "inner_product_backward_data", "inner_product_backward_weights");
    c.shape = "src " + prof::dimsText({batch, in}) + ", weights " + prof::dimsText({out, in}) + ", dst " +
              prof::dimsText({batch, out}) + (relu && pass == Pass::Forward ? ", relu" : "");
    c.flops = 2.0 * b * i * o;
    switch (pass) {
        case Pass::Forward:
            c.flops += (bias ? b * o : 0.0) + (relu ? b * o : 0.0);
            c.bytes = kF * (b * i + o * i + (bias ? o : 0.0) + b * o);
            break;
        case Pass::BackwardData: c.bytes = kF * (b * o + o * i + b * i); break;
        case Pass::BackwardWeights:
            c.flops += bias ? b * o : 0.0;
            c.bytes = kF * (b * i + b * o + o * i + (bias ? o : 0.0));
            break;
    }
    return c;
}

prof::OpCost convolution(Pass pass, const Dims& src, const Dims& dst, int64_t kernel, bool bias, bool relu,
                         int64_t group, int64_t kernelW) {
    if (kernelW <= 0) kernelW = kernel;
    const double n = static_cast<double>(src[0]), oc = static_cast<double>(dst[1]);
    const double ic = static_cast<double>(src[1] / group);  // input channels each output reads
    const double k2 = static_cast<double>(kernel * kernelW);
    const double srcN = product(src), dstN = product(dst), weights = oc * ic * k2;
    const double outPixels = dstN / n / oc;
    prof::OpCost c;
    c.kind = passName(pass, "convolution_forward", "convolution_backward_data", "convolution_backward_weights");
    c.shape = "src " + prof::dimsText(src) + ", weights " + prof::dimsText({dst[1], src[1] / group, kernel, kernelW}) +
              (group > 1 ? ", group " + std::to_string(group) : std::string()) + ", dst " + prof::dimsText(dst) +
              (relu && pass == Pass::Forward ? ", relu" : "");
    c.flops = 2.0 * n * oc * outPixels * ic * k2;
    switch (pass) {
        case Pass::Forward:
            c.flops += (bias ? dstN : 0.0) + (relu ? dstN : 0.0);
            c.bytes = kF * (srcN + weights + (bias ? oc : 0.0) + dstN);
            break;
        case Pass::BackwardData: c.bytes = kF * (dstN + weights + srcN); break;
        case Pass::BackwardWeights:
            c.flops += bias ? dstN : 0.0;
            c.bytes = kF * (srcN + dstN + weights + (bias ? oc : 0.0));
            break;
    }
    return c;
}

prof::OpCost maxPooling(bool forward, const Dims& src, const Dims& dst, int64_t window, bool relu, int64_t windowW) {
    if (windowW <= 0) windowW = window;
    const double srcN = product(src), dstN = product(dst);
    prof::OpCost c;
    c.kind = forward ? "pooling_max_forward" : "pooling_max_backward";
    c.shape = "src " + prof::dimsText(src) + ", window " + std::to_string(window) +
              (windowW != window ? "x" + std::to_string(windowW) : std::string()) + ", dst " + prof::dimsText(dst) +
              (relu ? ", relu" : "");
    c.flops = forward ? dstN * static_cast<double>(window * windowW) : dstN;
    // Forward reads the input and writes the output (and an arg-max per output); backward reads the
    // output gradient (and arg-max) and writes the input gradient.
    c.bytes = kF * (srcN + dstN) + dstN;
    if (relu) c.flops += dstN;
    return c;
}

prof::OpCost batchNorm(NormPass pass, const Dims& data, bool relu) {
    const double n = product(data), c = static_cast<double>(data[1]);
    prof::OpCost o;
    o.shape = "data " + prof::dimsText(data) + (relu ? ", relu" : "");
    const double mask = relu ? n / 8.0 : 0.0;
    switch (pass) {
        case NormPass::ForwardTraining:
            o.kind = "batch_normalization_forward_training";
            o.flops = 6.0 * n;
            o.bytes = kF * (2.0 * n + 4.0 * c) + mask;  // src, dst; scale, shift in; mean, variance out
            break;
        case NormPass::ForwardInference:
            o.kind = "batch_normalization_forward_inference";
            o.flops = 2.0 * n;
            o.bytes = kF * (2.0 * n + 4.0 * c);  // src, dst; scale, shift, mean, variance in
            break;
        case NormPass::Backward:
            o.kind = "batch_normalization_backward";
            o.flops = 10.0 * n;
            o.bytes = kF * (3.0 * n + 5.0 * c) + mask;  // src, diff_dst, diff_src; mean, variance, scale,
            break;                                      // diff_scale, diff_shift
    }
    if (relu) o.flops += n;
    return o;
}

prof::OpCost globalAvgPooling(bool forward, const Dims& src) {
    const double n = product(src), out = static_cast<double>(src[0] * src[1]);
    prof::OpCost c;
    c.kind = forward ? "pooling_avg_forward" : "pooling_avg_backward";
    c.shape = "src " + prof::dimsText(src) + ", window " + std::to_string(src[2]) + "x" + std::to_string(src[3]) +
              ", dst " + prof::dimsText({src[0], src[1]});
    c.flops = forward ? n + out : n;
    c.bytes = kF * (n + out);
    return c;
}

prof::OpCost binaryAdd(const Dims& dims, bool relu) {
    const double n = product(dims);
    prof::OpCost c;
    c.kind = "binary_add";
    c.shape = prof::dimsText(dims) + (relu ? ", relu" : "");
    c.flops = n * (relu ? 2.0 : 1.0);
    c.bytes = kF * 3.0 * n;
    return c;
}

prof::OpCost elementwise(const char* kind, const Dims& dims, int tensors, double flopsPerElement) {
    const double n = product(dims);
    prof::OpCost c;
    c.kind = kind;
    c.shape = prof::dimsText(dims);
    c.flops = n * flopsPerElement;
    c.bytes = kF * n * tensors;
    return c;
}

prof::OpCost reorder(const Dims& dims, int64_t bytesIn, int64_t bytesOut) {
    prof::OpCost c;
    c.kind = "reorder";
    c.shape = prof::dimsText(dims);
    c.bytes = static_cast<double>(bytesIn + bytesOut);
    return c;
}

prof::OpCost optimizerUpdate(const char* kind, int64_t params, double flopsPerParam, double bytesPerParam) {
    prof::OpCost c;
    c.kind = kind;
    c.shape = std::to_string(params) + " parameters";
    c.flops = static_cast<double>(params) * flopsPerParam;
    c.bytes = static_cast<double>(params) * bytesPerParam;
    return c;
}

}  // namespace trainbench::engine::opcost
