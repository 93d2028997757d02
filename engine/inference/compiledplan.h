#pragma once
// The oneDNN primitives that run a graph at one batch size, and the weights they read in the layouts
// they prefer. Internal to CompiledGraph (engine/inference/compiledgraph.h).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "engine/graph/graph.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine::inference {

// Initializers reordered to the layouts the primitives ask for: each (initializer, layout) once,
// when the first plan that needs it is built, then shared by every plan (batch size) that asks again.
class WeightCache {
public:
    WeightCache(graph::Graph& graph, const dnnl::engine& engine) : graph_(graph), engine_(engine) {}
    // The initializer `name` in layout `wanted`; a plain layout of the initializer's own element
    // count is served from the graph's values themselves.
    dnnl::memory get(const std::string& name, const dnnl::memory::desc& wanted);
    size_t reorderedCount() const { return reordered_.size(); }

private:
    struct Entry {
        std::string name;
        dnnl::memory::desc desc;
        std::unique_ptr<Tensor> tensor;
    };
    graph::Graph& graph_;
    const dnnl::engine& engine_;
    std::vector<Entry> reordered_;
};

struct CompiledStep {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
};

struct CompiledPlan {
    int64_t batch = 0;
    std::vector<CompiledStep> steps;
    dnnl::memory input;   // plain [n, sample...], pointed at the caller's examples on each run
    dnnl::memory output;  // plain [n, classes], pointed at the caller's logits on each run
    std::vector<std::unique_ptr<Tensor>> buffers;  // activations, in the layouts the primitives chose
    uint64_t lastUsed = 0;
};

// Builds the steps of `graph` (validated, with `shapes` its value shapes) for n examples. The graph's
// input scaling must already be folded into its first node or scaleInput set: then a first step
// applies input_scale and input_shift.
std::unique_ptr<CompiledPlan> buildPlan(const graph::Graph& graph, const std::map<std::string, Dims>& shapes,
                                        int64_t n, bool scaleInput, const dnnl::engine& engine, WeightCache& weights);

}  // namespace trainbench::engine::inference
