#pragma once
// The layout planner as one call, for `trainbench-cli plan-layouts` and the Plan page's Layouts tab:
// read the model, take the GPU from the catalog, search the data x pipeline x tensor layouts
// (engine/emulation/layoutsearch.h) and say what it searched.
#include <cstdint>
#include <string>
#include <vector>

#include "app/plan/layoutmodelfile.h"
#include "engine/emulation/layoutsearch.h"

namespace trainbench::app {

struct LayoutPlanOptions {
    std::string model;      // a description file (JSON) or an .onnx graph
    std::string device;     // a catalog id: a GPU with NVLink figures
    std::string catalog;    // a catalog file; empty: the built-in one
    int count = 0;          // GPUs
    int64_t global_batch = 0;  // 0: the model file's
    engine::LayoutOrder order = engine::LayoutOrder::Time;
    bool exhaustive = false;   // estimate every layout instead of the fast search's few
    std::vector<engine::Recompute> recompute{engine::Recompute::None, engine::Recompute::Selective,
                                             engine::Recompute::Full};
    int max_interleave = 4;
    int node_gpus = 8;
    double network_gbps = 200.0;  // per GPU, each direction
    bool shard_optimizer = false;
};

struct LayoutPlan {
    LayoutModel model;
    engine::GpuCluster cluster;
    int64_t global_batch = 0;
    engine::LayoutSearchResult search;
};

// std::invalid_argument naming what is wrong: the model file (and where in it), a device that is not
// a GPU with NVLink figures, no batch, no layout that can use the GPUs.
LayoutPlan planLayouts(const LayoutPlanOptions& options);

// The planner's figures as its table prints them: seconds to 3 significant places ("19.41", "0.458"),
// bytes in GiB to one decimal.
std::string layoutSeconds(double seconds);
std::string layoutGib(double bytes);

}  // namespace trainbench::app
