#include "engine/inference/int8compiledgraph.h"

#include <algorithm>
#include <stdexcept>

#include "engine/inference/int8plan.h"
#include "engine/inference/teamsize.h"

namespace trainbench::engine::inference {

Int8CompiledGraph::Int8CompiledGraph(const QuantizedGraph& graph, CpuDevice& device, CompileOptions options)
    : graph_(graph), device_(device), options_(options) {
    // The shapes from the graph with its weights back (the quantized graph keeps s8 codes only).
    const graph::Graph whole = graph_.dequantized();
    whole.validate();
    shapes_ = whole.valueShapes();
    macsPerExample_ = macsPerExample(whole, shapes_);
    weights_ = std::make_unique<Int8Weights>(graph_, device_.engine());
    prepare(1);  // an op int8 cannot run fails here, naming its node
}

Int8CompiledGraph::~Int8CompiledGraph() = default;

Int8Plan& Int8CompiledGraph::plan(int64_t n) {
    if (n < 1 || n > options_.max_batch)
        throw std::invalid_argument("a batch of " + std::to_string(n) + " examples is outside [1, " +
                                    std::to_string(options_.max_batch) + "]");
    ++runs_;
    for (auto& p : plans_)
        if (p->batch == n) {
            p->lastUsed = runs_;
            return *p;
        }
    if (plans_.size() >= std::max<size_t>(1, options_.max_plans)) {
        const auto oldest = std::min_element(plans_.begin(), plans_.end(),
                                             [](const auto& a, const auto& b) { return a->lastUsed < b->lastUsed; });
        plans_.erase(oldest);
    }
    const int threads = teamFor(n, macsPerExample_, options_.macs_per_thread);
    const TeamSize team(threads);
    plans_.push_back(buildInt8Plan(graph_, shapes_, n, device_.engine(), *weights_));
    plans_.back()->threads = threads;
    plans_.back()->lastUsed = runs_;
    return *plans_.back();
}

void Int8CompiledGraph::prepare(int64_t n) { plan(n); }

void Int8CompiledGraph::run(const float* x, int64_t n, float* logits) {
    Int8Plan& p = plan(n);
    const TeamSize team(std::min(p.threads, omp_get_max_threads()));
    runInt8Plan(p, x, logits, device_.stream());
}

}  // namespace trainbench::engine::inference
