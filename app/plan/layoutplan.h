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
    bool by_cost = false;      // rank by dollars per step instead of step time
    bool exhaustive = false;   // estimate every layout instead of the fast search's few
    std::vector<std::string> recompute{"none", "selective", "full"};
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
// a GPU with NVLink figures, no batch, a recomputation that is not one, no layout that can use the GPUs.
LayoutPlan planLayouts(const LayoutPlanOptions& options);

// When no layout of the plan fits: per recomputation option, the fewest GPUs one replica (the plan's
// batch over its GPUs) fits on, with the memory per GPU it needs.
std::vector<engine::LayoutEstimate> oneReplicaSplits(const LayoutPlan& plan, const LayoutPlanOptions& options);

// The same answer in plain values, for the GUI (which sees no engine type): one layout's figures.
struct LayoutFigures {
    std::string layout;  // "d16 p8 t8 b1 selective v4"
    int data = 1, pipeline = 1, tensor = 1;
    std::string recompute;  // "none", "selective", "full"
    double step_seconds = 0, compute_seconds = 0, recompute_seconds = 0, bubble_seconds = 0;
    double tensor_comm_seconds = 0, pipeline_comm_seconds = 0, data_comm_seconds = 0;  // exposed
    double optimizer_seconds = 0, overhead_seconds = 0;
    double weight_bytes = 0, gradient_bytes = 0, optimizer_bytes = 0, activation_bytes = 0, memory_bytes = 0;
    double capacity_bytes = 0;  // per GPU
    double model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0, usd_per_step = 0;
};

struct RejectedLayoutFigures {
    std::string layout;  // the first layout rejected for this reason
    std::string why;
    int64_t count = 1;   // layouts rejected for the same reason
};

struct LayoutPlanReport {
    std::string model;  // its name
    double parameters = 0;
    int64_t layers = 0, hidden = 0, heads = 0, sequence = 0;
    std::string device;
    int devices = 0, devices_per_node = 0;
    int64_t global_batch = 0;
    bool by_cost = false, exhaustive = false;
    int64_t evaluated = 0, candidates = 0;
    std::vector<LayoutFigures> ranked;             // fit, best first
    std::vector<RejectedLayoutFigures> rejected;   // memory first (nearest to fitting first), then structural
    // When nothing fits: per recomputation option, the fewest GPUs one replica fits on.
    std::vector<LayoutFigures> splits;
};

// planLayouts() as a report (the splits worked out when nothing fits).
LayoutPlanReport layoutPlanReport(const LayoutPlanOptions& options);
// The GPUs the planner can split over: the built-in catalog's GPUs with NVLink figures.
std::vector<std::string> layoutPlannerGpus();

// The planner's figures as its table prints them: seconds to 3 significant places ("19.41", "0.458"),
// bytes in GiB to one decimal.
std::string layoutSeconds(double seconds);
std::string layoutGib(double bytes);

}  // namespace trainbench::app
