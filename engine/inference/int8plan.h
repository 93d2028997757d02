#pragma once
// The oneDNN int8 primitives of a quantized graph at one batch size, and its weights in the
// layouts they want. Internal to Int8CompiledGraph (engine/inference/int8compiledgraph.h).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "engine/inference/compiledplan.h"
#include "engine/inference/quantizedgraph.h"

namespace trainbench::engine::inference {

// The s8 weights (and biases in the accumulator's scale, fp32) reordered once per layout and shared
// by every plan.
class Int8Weights {
public:
    Int8Weights(const QuantizedGraph& graph, const dnnl::engine& engine) : graph_(graph), engine_(engine) {}
    // Weight `name` (s8) in layout `wanted`, whose dims hold the same values in the same order.
    dnnl::memory weight(const std::string& name, const dnnl::memory::desc& wanted);
    // Bias `name` divided by inputScale x the weight's per-channel scales, in layout `wanted`:
    // oneDNN adds an int8 op's bias to the s32 accumulator before the output scale.
    dnnl::memory bias(const std::string& name, const std::string& weightName, float inputScale,
                      const dnnl::memory::desc& wanted);

private:
    struct Entry {
        std::string key;
        dnnl::memory::desc desc;
        dnnl::memory mem;
    };
    dnnl::memory reordered(const std::string& key, const dnnl::memory& plain, const dnnl::memory::desc& wanted);
    const QuantizedGraph& graph_;
    const dnnl::engine& engine_;
    std::vector<Entry> entries_;
};

struct Int8Plan {
    int64_t batch = 0;
    int threads = 1;
    CompiledStage stage;                 // input: plain fp32 as stored; output: plain fp32 logits
    std::vector<dnnl::memory> buffers;   // activations (library-allocated: any data type)
    uint64_t lastUsed = 0;
};

std::unique_ptr<Int8Plan> buildInt8Plan(const QuantizedGraph& graph, const std::map<std::string, graph::Dims>& shapes,
                                        int64_t n, const dnnl::engine& engine, Int8Weights& weights);
void runInt8Plan(Int8Plan& plan, const float* x, float* logits, dnnl::stream& stream);

}  // namespace trainbench::engine::inference
