#include "app/inference/graphservable.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/inference/int8compiledgraph.h"

namespace trainbench::app {

namespace {

engine::inference::CompileOptions compileOptions(int64_t maxBatch, size_t plans) {
    engine::inference::CompileOptions o;
    o.max_batch = std::max(o.max_batch, maxBatch);
    o.max_plans = plans;  // one per size of the ladder: none is ever evicted and built again
    return o;
}

// Compiled is CompiledGraph or Int8CompiledGraph: made from (model, device, options), run(x, n, out),
// prepare(n). A batch runs at the next size of planSizes() (padded with copies of its first
// example, whose answers are dropped), so an instance builds at most that many plans whatever
// batch sizes the dynamic batcher forms — without it, batches of every size from 1 to
// max_batch_size would keep evicting and rebuilding plans, milliseconds each, in the tail.
template <typename Compiled, typename Model>
class GraphInstance final : public engine::serving::ModelInstance {
public:
    GraphInstance(const Model& model, int threads, int64_t maxBatch, int64_t exampleSize, int64_t outputs)
        : sizes_(planSizes(maxBatch)),
          device_(threads),
          compiled_(model, device_, compileOptions(sizes_.back(), sizes_.size())),
          exampleSize_(exampleSize),
          outputs_(outputs) {}

    void predict(const float* x, int64_t n, float* out) override {
        // The instance is made on the starting thread and run on a batch thread (one at a time, but
        // not always the same one): the thread budget and denormal flags belong to the running thread.
        if (std::this_thread::get_id() != boundTo_) {
            device_.bindThreads();
            boundTo_ = std::this_thread::get_id();
        }
        if (!warm_) {
            // The sizes a server at low load runs, built together on the first call (on a batch
            // thread, with its thread budget: a plan built elsewhere would not run here).
            for (int64_t size : sizes_)
                if (size <= 8) compiled_.prepare(size);
            warm_ = true;
        }
        const int64_t padded = *std::lower_bound(sizes_.begin(), sizes_.end(), std::min(n, sizes_.back()));
        if (padded == n) return compiled_.run(x, n, out);
        if (n > padded) throw std::invalid_argument("a batch of " + std::to_string(n) + " is above the largest planned size");
        in_.resize(static_cast<size_t>(padded * exampleSize_));
        std::copy(x, x + n * exampleSize_, in_.begin());
        for (int64_t i = n; i < padded; ++i) std::copy(x, x + exampleSize_, in_.begin() + i * exampleSize_);
        out_.resize(static_cast<size_t>(padded * outputs_));
        compiled_.run(in_.data(), padded, out_.data());
        std::copy(out_.begin(), out_.begin() + n * outputs_, out);
    }

private:
    std::vector<int64_t> sizes_;
    engine::CpuDevice device_;
    Compiled compiled_;
    int64_t exampleSize_, outputs_;
    std::vector<float> in_, out_;  // padded batches
    std::thread::id boundTo_;
    bool warm_ = false;
};

int64_t exampleSizeOf(const engine::graph::Graph& g) {
    int64_t n = 1;
    for (int64_t d : g.sample_shape) n *= d;
    return n;
}

void checkOptions(const GraphServableOptions& options) {
    if (options.name.empty()) throw std::invalid_argument("the model name must not be empty");
    if (options.threads_per_instance < 0)
        throw std::invalid_argument("threads per instance must be at least 0 (0: every core), got " +
                                    std::to_string(options.threads_per_instance));
}

}  // namespace

std::vector<int64_t> planSizes(int64_t maxBatch) {
    if (maxBatch < 1) throw std::invalid_argument("the largest batch must be at least 1, got " + std::to_string(maxBatch));
    std::vector<int64_t> sizes;
    for (int64_t n = 1; n <= std::min<int64_t>(8, maxBatch); ++n) sizes.push_back(n);
    for (int64_t n = 8; n < maxBatch;) {
        n = std::min(maxBatch, (n * 5 / 4 + 3) / 4 * 4);  // +25 %, a multiple of 4
        sizes.push_back(n);
    }
    return sizes;
}

// The rows of the smallest embedding table the graph's integer input indexes (0: a float input).
static int64_t idRows(const engine::graph::Graph& g) {
    if (!g.integer_input) return 0;
    int64_t rows = 0;
    for (const engine::graph::Node& n : g.nodes)
        if (n.kind == engine::graph::OpKind::Gather && n.inputs.size() == 2 && n.inputs[0] == g.input) {
            const int64_t r = g.initializers.at(n.inputs[1]).dims.at(0);
            rows = rows == 0 ? r : std::min(rows, r);
        }
    return rows;
}

engine::serving::Servable graphServable(const engine::graph::Graph& graph, const GraphServableOptions& options) {
    checkOptions(options);
    // Optimized once; each instance compiles (and so copies) it. The weights are the graph's own.
    auto optimized = std::make_shared<const engine::graph::Graph>(engine::graph::optimizeForInference(graph));
    engine::serving::Servable s;
    s.name = options.name;
    s.inputShape.assign(optimized->sample_shape.begin(), optimized->sample_shape.end());
    s.outputs = optimized->classes;
    s.id_rows = idRows(*optimized);
    const int threads = options.threads_per_instance;
    const int64_t maxBatch = options.max_batch;
    s.newInstance = [optimized, threads, maxBatch]() -> std::unique_ptr<engine::serving::ModelInstance> {
        return std::make_unique<GraphInstance<engine::inference::CompiledGraph, engine::graph::Graph>>(
            *optimized, threads, maxBatch, exampleSizeOf(*optimized), optimized->classes);
    };
    return s;
}

engine::serving::Servable int8Servable(const engine::inference::QuantizedGraph& quantized,
                                       const GraphServableOptions& options) {
    checkOptions(options);
    auto model = std::make_shared<const engine::inference::QuantizedGraph>(quantized);
    engine::serving::Servable s;
    s.name = options.name;
    s.inputShape.assign(model->graph.sample_shape.begin(), model->graph.sample_shape.end());
    s.outputs = model->graph.classes;
    const int threads = options.threads_per_instance;
    const int64_t maxBatch = options.max_batch;
    s.newInstance = [model, threads, maxBatch]() -> std::unique_ptr<engine::serving::ModelInstance> {
        return std::make_unique<GraphInstance<engine::inference::Int8CompiledGraph, engine::inference::QuantizedGraph>>(
            *model, threads, maxBatch, exampleSizeOf(model->graph), model->graph.classes);
    };
    return s;
}

}  // namespace trainbench::app
