#pragma once
// A quantized graph (engine/inference/quantizedgraph.h) compiled for the CPU with oneDNN int8
// primitives: the stored input quantized to u8 by a reorder, u8 x s8 convolutions and inner products
// whose output scales requantize straight into the next op's u8/s8 input (ReLU and the 7-bit clip
// as post-ops), int8 pooling (same scale in and out), binary add with per-input scales, fp32 logits
// out of the last op. Weights reordered once per layout; a plan (primitives and buffers) per batch
// size, built on first use and cached like CompiledGraph's.
//
// NOT thread-safe: one instance per serving thread.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/inference/compiledgraph.h"
#include "engine/inference/quantizedgraph.h"

namespace trainbench::engine::inference {

struct Int8Plan;
class Int8Weights;

class Int8CompiledGraph {
public:
    // GraphError naming the node for an op int8 does not run. Uses CompileOptions' max_batch,
    // max_plans and macs_per_thread (no chunked prefix).
    Int8CompiledGraph(const QuantizedGraph& graph, CpuDevice& device, CompileOptions options = {});
    ~Int8CompiledGraph();
    Int8CompiledGraph(const Int8CompiledGraph&) = delete;
    Int8CompiledGraph& operator=(const Int8CompiledGraph&) = delete;

    // x: n examples as stored; logits: [n, classes] fp32. invalid_argument outside [1, max_batch].
    void run(const float* x, int64_t n, float* logits);
    void prepare(int64_t n);

    const QuantizedGraph& graph() const { return graph_; }
    int64_t classes() const { return graph_.graph.classes; }
    size_t planCount() const { return plans_.size(); }

private:
    Int8Plan& plan(int64_t n);

    QuantizedGraph graph_;
    std::map<std::string, graph::Dims> shapes_;
    CpuDevice& device_;
    CompileOptions options_;
    std::unique_ptr<Int8Weights> weights_;
    std::vector<std::unique_ptr<Int8Plan>> plans_;
    uint64_t runs_ = 0;
    int64_t macsPerExample_ = 0;
};

}  // namespace trainbench::engine::inference
