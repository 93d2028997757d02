#pragma once
// A graph quantized after training (static post-training quantization): per-output-channel
// symmetric s8 weights of every Conv and Gemm, per-tensor activation scales from calibration
// (engine/inference/calibration.h), biases kept fp32. What Int8CompiledGraph runs and what the
// model's int8 size is. q = round(x / scale), clamped to the value's levels.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace trainbench::engine::inference {

// A weight as s8: [out, ...] like the fp32 initializer, one scale per output channel.
struct QuantizedWeight {
    graph::Dims dims;
    std::vector<int8_t> values;
    std::vector<float> scales;  // per output channel: w ~ values * scales[out]
    bool operator==(const QuantizedWeight&) const = default;
};

// One activation's quantization: u8 where calibration never saw it negative (after a ReLU, image
// pixels), s8 otherwise; levels is the largest code (127 or 255 for u8, 127 for s8).
struct ActivationQuant {
    float scale = 1.0f;
    bool is_unsigned = true;
    int levels = 255;
    bool operator==(const ActivationQuant&) const = default;
};

// What the activation scales were calibrated on.
struct CalibrationRecord {
    int64_t batches = 0, batch_size = 0, examples = 0;
    std::string method = "minmax";   // "minmax" or "percentile"
    double percentile = 100.0;       // of |x|, for "percentile"
    uint64_t seed = 0;               // of the calibration examples' draw from the training set
    int u8_levels = 255;             // 127 where the CPU has no VNNI (see calibration.h)
    bool operator==(const CalibrationRecord&) const = default;
};

struct QuantizedGraph {
    graph::Graph graph;  // optimizeForInference'd; the quantized weights' fp32 values are dropped
    std::map<std::string, QuantizedWeight> weights;       // by initializer name
    // By value name: every value int8 holds in codes, as it runs them: the input and each Conv, Gemm
    // and Add output with their calibrated scales, pooling and Flatten outputs with their input's; not
    // fp32 logits written by the last Conv, Gemm or Add.
    std::map<std::string, ActivationQuant> activations;
    CalibrationRecord calibration;

    // Bytes of weights as kept: s8 weights, their fp32 scales and every fp32 initializer left.
    int64_t weightBytes() const;
    // The graph with each weight dequantized (values * scale): what the int8 model computes with,
    // for checks against the fp32 graph.
    graph::Graph dequantized() const;
};

// What int8 runs of a graph, apart from its scales (int8plan.cpp): GraphError naming the node for a
// batch norm not folded into the Conv or Gemm before it and for a standalone Relu.
void checkInt8Ops(const graph::Graph& graph);
// The values int8 holds in codes, each with the value whose quantization its codes are in: itself
// for the input and each Conv, Gemm and Add output; a pooling or Flatten output shares its input's
// (a max of codes is the code of the max; an average rounds back to them). Logits a last Conv, Gemm
// or Add writes in fp32 are not among them.
std::map<std::string, std::string> activationSources(const graph::Graph& graph);

// Bytes of an fp32 graph's initializers (the size quantization is compared with).
int64_t fp32WeightBytes(const graph::Graph& graph);

// Per-output-channel symmetric s8 (codes -127..127) of an fp32 weight [out, ...].
QuantizedWeight quantizeWeight(const graph::Initializer& weight);

}  // namespace trainbench::engine::inference
