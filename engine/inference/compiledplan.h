#pragma once
// The oneDNN primitives that run a graph at one batch size, and the weights they read in the layouts
// they prefer. Internal to CompiledGraph (engine/inference/compiledgraph.h).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "engine/graph/graph.h"
#include "engine/inference/weightcache.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine::inference {

// A oneDNN primitive and its arguments, or (`host` set) a loop of the engine's own where oneDNN has
// no primitive (an embedding's gather, erf): it reads and writes the memories it captured.
struct CompiledStep {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
    std::function<void()> host;
};

inline void runStep(CompiledStep& step, dnnl::stream& stream) {
    if (step.host) {
        stream.wait();
        step.host();
    } else {
        step.primitive.execute(stream, step.args);
    }
}

// Steps for one batch size, from the memory `input` (pointed at the examples before a run) to the
// memory `output` (pointed where the results go).
struct CompiledStage {
    int64_t batch = 0;
    std::vector<CompiledStep> steps;
    dnnl::memory input, output;
    std::vector<dnnl::memory> inputViews;  // the input under other dims (a Flatten's), pointed with it
};

// A graph at one batch size. Large batches run the graph's convolutional prefix (the nodes before
// its first Gemm, when only one value crosses that cut) in chunks of `chunk` examples, so that its
// wide activations (W2's first convolution writes 86 KB per example) stay in cache between the
// convolution and the pooling after it; the rest runs on the whole batch, where a Gemm reads its
// weights once for all examples.
struct CompiledPlan {
    int64_t batch = 0;
    int threads = 1;                     // the OpenMP team it was built for and runs with
    int64_t chunk = 0;                   // 0: no prefix stage
    std::vector<CompiledStage> prefix;   // [0]: `chunk` examples; [1]: batch % chunk, when not 0
    size_t prefixBytesPerExample = 0;    // of the prefix's output, in the layout it is written in
    CompiledStage main;                  // input: plain [n, sample...] or the prefix's whole output
    std::vector<std::unique_ptr<Tensor>> buffers;  // activations, in the layouts the primitives chose
    uint64_t lastUsed = 0;
};

// Builds the steps of `graph` (validated, with `shapes` its value shapes) for n examples, chunking
// the prefix by `chunk` examples when n > chunk > 0. scaleInput: a first step applies the
// metadata's input_scale and input_shift (else they are 1 and 0 or folded into the weights).
std::unique_ptr<CompiledPlan> buildPlan(const graph::Graph& graph, const std::map<std::string, Dims>& shapes,
                                        int64_t n, int64_t chunk, bool scaleInput, const dnnl::engine& engine,
                                        WeightCache& weights);

// Runs a plan: x is the plain input, logits the plain output.
void runPlan(CompiledPlan& plan, const float* x, float* logits, dnnl::stream& stream);

}  // namespace trainbench::engine::inference
