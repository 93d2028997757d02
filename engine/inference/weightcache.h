#pragma once
// The weights of a compiled graph in the layouts its primitives want (engine/inference/compiledgraph.h).
#include <memory>
#include <string>
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
    // A Gemm's weight `name` ([units, C, H, W] values) with each row's values in the order an example's
    // values lie in `input` (a layout of [n, C, H, W] with the batch outermost and no padding, such as
    // nhwc or nChw16c), added to the graph as a plain [units, C*H*W] initializer (once per layout)
    // whose name is returned: the Gemm then reads its input as a plain [n, C*H*W] matrix.
    std::string matchingInput(const std::string& name, const dnnl::memory::desc& input);

private:
    struct Entry {
        std::string name;
        dnnl::memory::desc desc;
        std::unique_ptr<Tensor> tensor;
    };
    graph::Graph& graph_;
    const dnnl::engine& engine_;
    std::vector<Entry> reordered_;
    std::vector<Entry> permuted_;  // tensor empty: the name under `desc` is the permuted initializer's
};

}  // namespace trainbench::engine::inference
