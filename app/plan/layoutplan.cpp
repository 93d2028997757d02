#include "app/plan/layoutplan.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "engine/emulation/devicecatalog.h"

namespace trainbench::app {

namespace {
std::string printed(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

engine::LayoutAssumptions assumptionsOf(const LayoutPlanOptions& o) {
    engine::LayoutAssumptions a;
    a.shard_optimizer = o.shard_optimizer;
    return a;
}

LayoutFigures figuresOf(const engine::LayoutEstimate& e) {
    LayoutFigures f;
    f.layout = e.layout.text();
    f.data = e.layout.data;
    f.pipeline = e.layout.pipeline;
    f.tensor = e.layout.tensor;
    f.recompute = engine::recomputeName(e.layout.recompute);
    f.step_seconds = e.step_s;
    f.compute_seconds = e.compute_s;
    f.recompute_seconds = e.recompute_s;
    f.bubble_seconds = e.bubble_s;
    f.tensor_comm_seconds = e.tensor_comm_s;
    f.pipeline_comm_seconds = e.pipeline_comm_s;
    f.data_comm_seconds = e.data_comm_s;
    f.optimizer_seconds = e.optimizer_s;
    f.overhead_seconds = e.overhead_s;
    f.weight_bytes = e.weight_bytes;
    f.gradient_bytes = e.gradient_bytes;
    f.optimizer_bytes = e.optimizer_bytes;
    f.activation_bytes = e.activation_bytes;
    f.memory_bytes = e.memoryBytes();
    f.capacity_bytes = e.capacity_bytes;
    f.model_tflops_per_gpu = e.model_tflops_per_gpu;
    f.hardware_tflops_per_gpu = e.hardware_tflops_per_gpu;
    f.usd_per_step = e.usd_per_step;
    return f;
}
}  // namespace

LayoutPlan planLayouts(const LayoutPlanOptions& o) {
    LayoutPlan plan;
    plan.model = readLayoutModel(o.model);
    const engine::DeviceCatalog catalog =
        o.catalog.empty() ? engine::DeviceCatalog::builtin() : engine::DeviceCatalog::load(o.catalog);
    plan.cluster.device = catalog.get(o.device);
    if (plan.cluster.device.kind != engine::DeviceKind::Gpu || !plan.cluster.device.links)
        throw std::invalid_argument("--device " + o.device + ": layout planning needs a GPU with NVLink figures; " +
                                    o.device + " is a " + engine::deviceKindName(plan.cluster.device.kind));
    plan.cluster.devices = o.count;
    plan.cluster.devices_per_node = o.node_gpus;
    plan.cluster.network_bytes_per_s = o.network_gbps * 1e9 / 8.0;
    plan.global_batch = o.global_batch > 0 ? o.global_batch : plan.model.global_batch.value_or(0);
    if (plan.global_batch <= 0)
        throw std::invalid_argument("--global-batch: the model file " + o.model +
                                    " gives no global_batch; say how many sequences a step takes");
    engine::LayoutSpace space;
    space.recompute.clear();
    for (const std::string& name : o.recompute) {
        const auto r = engine::parseRecompute(name);
        if (!r) throw std::invalid_argument("--recompute: '" + name + "' is not one of none, selective, full");
        space.recompute.push_back(*r);
    }
    space.max_interleave = o.max_interleave;
    const engine::LayoutAssumptions assumptions = assumptionsOf(o);
    const engine::LayoutOrder order = o.by_cost ? engine::LayoutOrder::Cost : engine::LayoutOrder::Time;
    plan.search = o.exhaustive
                      ? engine::searchLayoutsExhaustive(plan.model.costs, plan.global_batch, plan.cluster, space, assumptions, order)
                      : engine::searchLayoutsFast(plan.model.costs, plan.global_batch, plan.cluster, space, assumptions, order);
    return plan;
}

LayoutPlanReport layoutPlanReport(const LayoutPlanOptions& options) {
    const LayoutPlan plan = planLayouts(options);
    LayoutPlanReport r;
    const engine::TransformerShape& shape = plan.model.costs.shape;
    r.model = shape.name;
    r.parameters = plan.model.costs.params();
    r.layers = shape.layers;
    r.hidden = shape.hidden;
    r.heads = shape.heads;
    r.sequence = shape.sequence;
    r.device = plan.cluster.device.id;
    r.devices = plan.cluster.devices;
    r.devices_per_node = plan.cluster.devices_per_node;
    r.global_batch = plan.global_batch;
    r.by_cost = options.by_cost;
    r.exhaustive = options.exhaustive;
    r.evaluated = plan.search.evaluated;
    r.candidates = plan.search.candidates;
    for (const engine::LayoutEstimate& e : plan.search.ranked) r.ranked.push_back(figuresOf(e));
    for (const engine::RejectedLayout& x : plan.search.rejected) r.rejected.push_back({x.layout.text(), x.why, x.count});
    if (r.ranked.empty())
        for (const engine::LayoutEstimate& e : oneReplicaSplits(plan, options)) r.splits.push_back(figuresOf(e));
    return r;
}

std::vector<engine::LayoutEstimate> oneReplicaSplits(const LayoutPlan& plan, const LayoutPlanOptions& options) {
    const int64_t replicaBatch = std::max<int64_t>(1, plan.global_batch / std::max(1, plan.cluster.devices));
    return engine::splitsThatFit(plan.model.costs, replicaBatch, plan.cluster, assumptionsOf(options));
}

std::vector<std::string> layoutPlannerGpus() {
    std::vector<std::string> out;
    for (const engine::DeviceSpec& d : engine::DeviceCatalog::builtin().devices())
        if (d.kind == engine::DeviceKind::Gpu && d.links) out.push_back(d.id);
    return out;
}

std::string layoutSeconds(double s) {
    return s >= 100 ? printed("%.0f", s) : s >= 1 ? printed("%.2f", s) : printed("%.3f", s);
}

std::string layoutGib(double bytes) { return printed("%.1f", bytes / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace trainbench::app
