#pragma once
// An inference graph compiled for the CPU: oneDNN fp32 primitives (convolution and inner product
// with ReLU as a post-op, pooling, batch norm with global statistics, binary add with ReLU), weights
// reordered once into the layouts the kernels prefer, activations kept in those (blocked) layouts
// between ops and plain at the output. The primitives for a batch size are built on its first run
// (or by prepare()) and cached.
//
// NOT thread-safe: run() uses the instance's buffers and primitives. Serve with one instance per
// thread (they may share nothing but the graph they were compiled from, which is copied).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/graph/graph.h"

namespace trainbench::engine::inference {

struct CompiledPlan;
class WeightCache;

struct CompileOptions {
    // Batches above this are refused before anything is allocated for them.
    int64_t max_batch = 4096;
    // Plans (one per batch size, each with its activation buffers) kept; the least recently used
    // one goes when another batch size arrives.
    size_t max_plans = 16;
    // Batches larger than this run the graph's convolutional prefix this many examples at a time
    // (engine/inference/compiledplan.h); 0 runs every batch whole.
    int64_t chunk = 16;
    // A run gets one thread per this many multiply-adds (at least one, at most the calling thread's
    // OpenMP budget). Splitting a single example's 0.5-3 M multiply-adds (W1, W2) over two threads
    // saves some microseconds on an idle machine but costs milliseconds whenever another process
    // holds the second core: the first thread waits at every op's barrier for the descheduled one.
    int64_t macs_per_thread = 4'000'000;
};

class CompiledGraph {
public:
    // Validates `graph` (GraphError) and copies it. The metadata's input scale, when there is no
    // shift and one Conv or Gemm reads the input, is folded into that node's weights; otherwise a
    // first step applies it. Primitives run on `device`, on the thread that calls run(), within that
    // thread's OpenMP budget (CpuDevice::bindThreads()), using fewer threads for small batches
    // (CompileOptions::macs_per_thread).
    CompiledGraph(const graph::Graph& graph, CpuDevice& device, CompileOptions options = {});
    ~CompiledGraph();
    CompiledGraph(const CompiledGraph&) = delete;
    CompiledGraph& operator=(const CompiledGraph&) = delete;

    // x: n examples of sampleShape(), plain, as stored (before input scaling). Writes the logits,
    // [n, classes()] row-major, to `logits`. std::invalid_argument when n is not in [1, max_batch].
    void run(const float* x, int64_t n, float* logits);
    // Builds (or keeps) the plan for batch n now, so the first run() at that size is not slower.
    void prepare(int64_t n);

    const graph::Graph& graph() const { return graph_; }
    const graph::Dims& sampleShape() const { return graph_.sample_shape; }
    int64_t classes() const { return graph_.classes; }
    size_t planCount() const { return plans_.size(); }

private:
    CompiledPlan& plan(int64_t n);

    graph::Graph graph_;
    std::map<std::string, graph::Dims> shapes_;
    CpuDevice& device_;
    CompileOptions options_;
    bool scaleInput_ = false;
    std::unique_ptr<WeightCache> weights_;
    std::vector<std::unique_ptr<CompiledPlan>> plans_;
    uint64_t runs_ = 0;
    int64_t macsPerExample_ = 0;
};

}  // namespace trainbench::engine::inference
