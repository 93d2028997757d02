#include "engine/inference/compiledgraph.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>

#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledplan.h"
#include "engine/inference/teamsize.h"

namespace trainbench::engine::inference {

namespace {

// Folds input_scale into the one Conv or Gemm that reads the input: W (s x) = (s W) x, also where a
// convolution pads (s 0 = 0). A shift does not fold through padding, so it keeps its own step.
bool foldInputScale(graph::Graph& g) {
    const graph::GraphMetadata& m = g.metadata;
    if (m.input_scale == 1.0f && m.input_shift == 0.0f) return true;
    if (m.input_shift != 0.0f || graph::useCount(g, g.input) != 1) return false;
    for (graph::Node& node : g.nodes) {
        if (node.inputs[0] != g.input) continue;
        if (node.kind != graph::OpKind::Conv && node.kind != graph::OpKind::Gemm) return false;
        if (graph::useCount(g, node.inputs[1]) != 1) return false;
        for (float& w : g.initializers.at(node.inputs[1]).values) w *= m.input_scale;
        return true;
    }
    return false;
}

}  // namespace

CompiledGraph::CompiledGraph(const graph::Graph& graph, CpuDevice& device, CompileOptions options)
    : graph_(graph), device_(device), options_(options) {
    if (graph_.weightless)
        throw graph::GraphError("the model was stripped to its shapes (no weights): it can be estimated, not run");
    graph_.validate();
    shapes_ = graph_.valueShapes();
    scaleInput_ = !foldInputScale(graph_);
    macsPerExample_ = macsPerExample(graph_, shapes_);
    weights_ = std::make_unique<WeightCache>(graph_, device_.engine());
}

CompiledGraph::~CompiledGraph() = default;

CompiledPlan& CompiledGraph::plan(int64_t n) {
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
    // Primitives split their work for the team they are created under: build with the run's.
    const int threads = teamFor(n, macsPerExample_, options_.macs_per_thread);
    const TeamSize team(threads);
    plans_.push_back(buildPlan(graph_, shapes_, n, options_.chunk, scaleInput_, device_.engine(), *weights_));
    plans_.back()->threads = threads;
    plans_.back()->lastUsed = runs_;
    return *plans_.back();
}

void CompiledGraph::prepare(int64_t n) { plan(n); }

void CompiledGraph::run(const float* x, int64_t n, float* logits) {
    CompiledPlan& p = plan(n);
    const TeamSize team(std::min(p.threads, omp_get_max_threads()));  // never above the caller's budget
    runPlan(p, x, logits, device_.stream());
}

}  // namespace trainbench::engine::inference
