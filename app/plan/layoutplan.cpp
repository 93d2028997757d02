#include "app/plan/layoutplan.h"

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
    space.recompute = o.recompute;
    space.max_interleave = o.max_interleave;
    engine::LayoutAssumptions assumptions;
    assumptions.shard_optimizer = o.shard_optimizer;
    plan.search = o.exhaustive
                      ? engine::searchLayoutsExhaustive(plan.model.costs, plan.global_batch, plan.cluster, space, assumptions, o.order)
                      : engine::searchLayoutsFast(plan.model.costs, plan.global_batch, plan.cluster, space, assumptions, o.order);
    return plan;
}

std::string layoutSeconds(double s) {
    return s >= 100 ? printed("%.0f", s) : s >= 1 ? printed("%.2f", s) : printed("%.3f", s);
}

std::string layoutGib(double bytes) { return printed("%.1f", bytes / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace trainbench::app
