// trainbench-cli plan-layouts: the model-parallel layout planner. Every data x pipeline x tensor split
// of N GPUs, micro-batch, recomputation and pipeline schedule; those that fit memory ranked by step
// time (or cost) with Calculon's per-layout figures, the rejected ones with why.
#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/texttable.h"
#include "app/plan/layoutplan.h"
#include "app/run/exitcodes.h"
#include "engine/emulation/layoutsearch.h"

namespace trainbench::cli {

namespace {

using nlohmann::json;
constexpr double kLayoutGiB = 1024.0 * 1024.0 * 1024.0;

using app::layoutGib;
using app::layoutSeconds;

json layoutJson(const engine::LayoutEstimate& e) {
    const engine::Layout& l = e.layout;
    return {{"layout", l.text()}, {"data", l.data}, {"pipeline", l.pipeline}, {"tensor", l.tensor},
            {"micro_batch", l.micro_batch}, {"micro_batches", e.micro_batches}, {"recompute", engine::recomputeName(l.recompute)},
            {"interleave", l.interleave}, {"step_seconds", e.step_s}, {"compute_seconds", e.compute_s},
            {"recompute_seconds", e.recompute_s}, {"bubble_seconds", e.bubble_s}, {"tensor_comm_seconds", e.tensor_comm_s},
            {"pipeline_comm_seconds", e.pipeline_comm_s}, {"data_comm_seconds", e.data_comm_s},
            {"data_comm_total_seconds", e.data_comm_total_s}, {"optimizer_seconds", e.optimizer_s},
            {"overhead_seconds", e.overhead_s}, {"weight_bytes", e.weight_bytes}, {"gradient_bytes", e.gradient_bytes},
            {"optimizer_bytes", e.optimizer_bytes}, {"activation_bytes", e.activation_bytes}, {"memory_bytes", e.memoryBytes()},
            {"capacity_bytes", e.capacity_bytes}, {"model_tflops_per_gpu", e.model_tflops_per_gpu},
            {"hardware_tflops_per_gpu", e.hardware_tflops_per_gpu}, {"tokens_per_second", e.tokens_per_s},
            {"usd_per_step", e.usd_per_step}};
}

void printLayouts(const engine::LayoutSearchResult& r, const app::LayoutModel& m, const engine::GpuCluster& cluster,
                  int64_t batch, const PlanLayoutsArgs& a) {
    const engine::TransformerShape& s = m.costs.shape;
    const double params = m.costs.params();
    const std::string paramsText = params >= 1e9 ? fmt("%.1f B", params / 1e9) : fmt("%.1f M", params / 1e6);
    std::printf("plan-layouts: %s (%s parameters, %lld layers, hidden %lld, %lld heads, sequence %lld, vocabulary %lld) "
                "at batch %lld on %d x %s (%d per node), ranked by %s\n\n",
                s.name.c_str(), paramsText.c_str(), static_cast<long long>(s.layers), static_cast<long long>(s.hidden),
                static_cast<long long>(s.heads), static_cast<long long>(s.sequence), static_cast<long long>(s.vocab),
                static_cast<long long>(batch), cluster.devices, cluster.device.id.c_str(), cluster.devices_per_node,
                a.order == "cost" ? "cost per step" : "step time");
    TextTable t({"#", "LAYOUT", "STEP s", "COMPUTE", "RECOMP", "BUBBLE", "TP", "PP", "DP", "WEIGHTS", "GRADS", "OPTIM",
                 "ACTIV", "MEMORY GiB", "TFLOP/S/GPU", "HW TFLOP/S", "$/STEP"});
    for (size_t i = 0; i < r.ranked.size() && static_cast<int>(i) < a.top; ++i) {
        const engine::LayoutEstimate& e = r.ranked[i];
        t.add({std::to_string(i + 1), e.layout.text(), layoutSeconds(e.step_s), layoutSeconds(e.compute_s),
               layoutSeconds(e.recompute_s), layoutSeconds(e.bubble_s), layoutSeconds(e.tensor_comm_s),
               layoutSeconds(e.pipeline_comm_s), layoutSeconds(e.data_comm_s), layoutGib(e.weight_bytes),
               layoutGib(e.gradient_bytes), layoutGib(e.optimizer_bytes), layoutGib(e.activation_bytes),
               layoutGib(e.memoryBytes()), fmt("%.1f", e.model_tflops_per_gpu), fmt("%.1f", e.hardware_tflops_per_gpu),
               fmt("%.2f", e.usd_per_step)});
    }
    t.print(stdout);
    std::printf("\nlayout: d data, p pipeline, t tensor degrees; b sequences per micro-batch; recomputation; v model chunks per "
                "GPU (interleaved 1F1B; without v: 1F1B). Times are seconds per step on the busiest GPU; memory per GPU.\n");
    // The best of each mesh: where a d x p x t split ranks whatever its micro-batch and recomputation.
    std::printf("\nbest of each d x p x t:");
    std::set<std::tuple<int, int, int>> seen;
    int shown = 0;
    for (const engine::LayoutEstimate& e : r.ranked) {
        if (!seen.insert({e.layout.data, e.layout.pipeline, e.layout.tensor}).second) continue;
        std::printf("%s %d. d%d p%d t%d %s s", shown ? "," : "", shown + 1, e.layout.data, e.layout.pipeline, e.layout.tensor,
                    layoutSeconds(e.step_s).c_str());
        if (++shown == 5) break;
    }
    std::printf("\n\nsearch: %s, %lld of %lld layouts estimated (%.1f %%), %zu fit\n", a.exhaustive ? "exhaustive" : "fast",
                static_cast<long long>(r.evaluated), static_cast<long long>(r.candidates),
                100.0 * static_cast<double>(r.evaluated) / static_cast<double>(std::max<int64_t>(1, r.candidates)),
                r.ranked.size());
    if (r.rejected.empty()) return;
    std::printf("\nrejected (%zu reasons%s):\n", r.rejected.size(),
                a.exhaustive ? "" : "; memory: the layouts the fast search estimated");
    for (size_t i = 0; i < r.rejected.size() && static_cast<int>(i) < a.top_rejected; ++i) {
        const engine::RejectedLayout& x = r.rejected[i];
        std::printf("  %-26s %s", x.layout.text().c_str(), x.why.c_str());
        if (x.count > 1) std::printf(" (%lld layouts)", static_cast<long long>(x.count));
        std::printf("\n");
    }
    if (static_cast<int>(r.rejected.size()) > a.top_rejected)
        std::printf("  ... %zu more (--top-rejected)\n", r.rejected.size() - static_cast<size_t>(a.top_rejected));
}

}  // namespace

int planLayoutsCommand(const PlanLayoutsArgs& a) {
    app::LayoutPlanOptions o;
    o.model = a.model;
    o.device = a.device;
    o.catalog = a.catalog;
    o.count = a.count;
    o.global_batch = a.global_batch;
    o.by_cost = a.order == "cost";
    o.recompute = a.recompute;
    o.exhaustive = a.exhaustive;
    o.max_interleave = a.max_interleave;
    o.node_gpus = a.node_gpus;
    o.network_gbps = a.network_gbps;
    o.shard_optimizer = a.shard_optimizer;
    app::LayoutPlan plan;
    try {
        plan = app::planLayouts(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "plan-layouts: %s\n", e.what());
        return kExitUsage;
    }
    const app::LayoutModel& model = plan.model;
    const engine::GpuCluster& cluster = plan.cluster;
    const int64_t batch = plan.global_batch;
    const engine::LayoutSearchResult& r = plan.search;
    if (a.json) {
        json ranked = json::array(), rejected = json::array();
        for (size_t i = 0; i < r.ranked.size() && static_cast<int>(i) < a.top; ++i) ranked.push_back(layoutJson(r.ranked[i]));
        for (const engine::RejectedLayout& x : r.rejected)
            rejected.push_back({{"layout", x.layout.text()}, {"why", x.why}, {"count", x.count}, {"memory_bytes", x.memory_bytes}});
        const engine::TransformerShape& s = model.costs.shape;
        const json out{{"model", {{"name", s.name}, {"source", model.source}, {"parameters", model.costs.params()},
                                  {"layers", s.layers}, {"hidden", s.hidden}, {"heads", s.heads}, {"sequence", s.sequence},
                                  {"vocab", s.vocab}, {"ffn", s.ffnWidth()}}},
                       {"device", cluster.device.id}, {"count", cluster.devices}, {"global_batch", batch},
                       {"order", a.order}, {"search", a.exhaustive ? "exhaustive" : "fast"}, {"evaluated", r.evaluated},
                       {"candidates", r.candidates}, {"ranked", ranked}, {"rejected", rejected}};
        std::printf("%s\n", out.dump(2).c_str());
    } else {
        printLayouts(r, model, cluster, batch, a);
    }
    if (r.ranked.empty()) {
        std::fprintf(stderr, "plan-layouts: no layout of %d x %s fits memory\n", cluster.devices, cluster.device.id.c_str());
        // What it would take: per recomputation option, the fewest GPUs one replica fits on.
        for (const engine::LayoutEstimate& e : app::oneReplicaSplits(plan, o))
            std::fprintf(stderr, "  recompute %-9s one replica fits on %d GPUs as p%d t%d: %.1f GiB per GPU (weights %.1f, "
                         "gradients %.1f, optimizer %.1f, activations %.1f)\n",
                         engine::recomputeName(e.layout.recompute), e.layout.devices(), e.layout.pipeline, e.layout.tensor,
                         e.memoryBytes() / kLayoutGiB, e.weight_bytes / kLayoutGiB, e.gradient_bytes / kLayoutGiB,
                         e.optimizer_bytes / kLayoutGiB, e.activation_bytes / kLayoutGiB);
        return kExitRunFailed;
    }
    return kExitOk;
}

}  // namespace trainbench::cli
