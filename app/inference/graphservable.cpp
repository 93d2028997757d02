#include "app/inference/graphservable.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <thread>

#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/inference/int8compiledgraph.h"

namespace trainbench::app {

namespace {

engine::inference::CompileOptions compileOptions(int64_t maxBatch) {
    engine::inference::CompileOptions o;
    o.max_batch = std::max(o.max_batch, maxBatch);
    return o;
}

// Compiled is CompiledGraph or Int8CompiledGraph: made from (model, device, options), run(x, n, out).
template <typename Compiled, typename Model>
class GraphInstance final : public engine::serving::ModelInstance {
public:
    GraphInstance(const Model& model, int threads, int64_t maxBatch)
        : device_(threads), compiled_(model, device_, compileOptions(maxBatch)) {}

    void predict(const float* x, int64_t n, float* out) override {
        // The instance is made on the starting thread and run on a batch thread (one at a time, but
        // not always the same one): the thread budget and denormal flags belong to the running thread.
        if (std::this_thread::get_id() != boundTo_) {
            device_.bindThreads();
            boundTo_ = std::this_thread::get_id();
        }
        compiled_.run(x, n, out);
    }

private:
    engine::CpuDevice device_;
    Compiled compiled_;
    std::thread::id boundTo_;
};

void checkOptions(const GraphServableOptions& options) {
    if (options.name.empty()) throw std::invalid_argument("the model name must not be empty");
    if (options.threads_per_instance < 0)
        throw std::invalid_argument("threads per instance must be at least 0 (0: every core), got " +
                                    std::to_string(options.threads_per_instance));
}

}  // namespace

engine::serving::Servable graphServable(const engine::graph::Graph& graph, const GraphServableOptions& options) {
    checkOptions(options);
    // Optimized once; each instance compiles (and so copies) it. The weights are the graph's own.
    auto optimized = std::make_shared<const engine::graph::Graph>(engine::graph::optimizeForInference(graph));
    engine::serving::Servable s;
    s.name = options.name;
    s.inputShape.assign(optimized->sample_shape.begin(), optimized->sample_shape.end());
    s.outputs = optimized->classes;
    const int threads = options.threads_per_instance;
    const int64_t maxBatch = options.max_batch;
    s.newInstance = [optimized, threads, maxBatch]() -> std::unique_ptr<engine::serving::ModelInstance> {
        return std::make_unique<GraphInstance<engine::inference::CompiledGraph, engine::graph::Graph>>(*optimized, threads,
                                                                                                        maxBatch);
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
            *model, threads, maxBatch);
    };
    return s;
}

}  // namespace trainbench::app
