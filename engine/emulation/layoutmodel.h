#pragma once
// The cost of one model-parallel layout of a transformer on a cluster of GPUs: data x pipeline x
// tensor degrees, micro-batches, activation recomputation and the pipeline schedule, in the terms
// Calculon prints (compute, recompute, bubble, exposed tensor / pipeline / data communication;
// weight, gradient, optimizer and activation memory). Closed forms, microseconds per layout; every
// formula and its source: docs/model-parallelism.md.
#include <cstdint>
#include <optional>
#include <string>

#include "engine/emulation/devicespec.h"
#include "engine/emulation/transformershape.h"

namespace trainbench::engine {

// What backward recomputes instead of keeping (Korthikanti et al., 2022): nothing; the attention
// core (softmax, dropout and the two attention products); or the whole block from its input.
enum class Recompute { None, Selective, Full };
const char* recomputeName(Recompute r);
// "none", "selective", "full"; std::nullopt otherwise.
std::optional<Recompute> parseRecompute(const std::string& name);

struct Layout {
    int data = 1;
    int pipeline = 1;
    int tensor = 1;
    int64_t micro_batch = 1;  // sequences per micro-batch
    Recompute recompute = Recompute::None;
    // Model chunks per GPU: 1 is 1F1B (PipeDream-Flush); v > 1 the interleaved 1F1B schedule
    // (Narayanan et al., 2021), each GPU holding v chunks of layers / (p x v) blocks.
    int interleave = 1;

    int devices() const { return data * pipeline * tensor; }
    // "d8 p16 t8 b1 full" (+ " v2" when interleaved), for tables and messages.
    std::string text() const;
    bool operator==(const Layout&) const = default;
};

// The GPUs and how they are wired: `devices_per_node` GPUs share a node's NVLink switch (the
// catalog's NVLink figure), nodes are joined by a network of `network_bytes_per_s` per GPU and
// direction (DGX A100: one 200 Gbit/s HDR InfiniBand adapter per GPU, 25 GB/s).
struct GpuCluster {
    DeviceSpec device;
    int devices = 0;
    int devices_per_node = 8;
    double network_bytes_per_s = 25e9;
    double network_latency_s = 5e-6;
};

// What the hardware achieves of its peaks, and how training keeps its state. The defaults and where
// they come from: docs/model-parallelism.md, "Assumptions".
struct LayoutAssumptions {
    Precision precision = Precision::Bf16;
    double matrix_efficiency = 0.8;   // achieved fraction of the tensor-core peak in large matrix products
    double memory_efficiency = 0.9;   // achieved fraction of the HBM bandwidth in element-wise ops
    double link_efficiency = 0.8;     // achieved fraction of NVLink and network bandwidth in collectives
    double optimizer_bytes_per_param = 12.0;  // mixed-precision Adam: fp32 master weights and two moments
    bool shard_optimizer = false;     // ZeRO stage 1: the optimizer state divided over the data-parallel ranks
    // The gradient all-reduce overlaps the last micro-batch's backward. Off: it follows the pipeline's
    // flush, as in Megatron-LM at the time of Narayanan et al. 2021.
    bool overlap_gradients = false;
};

// One step of one layout, seen from the busiest GPU: times in seconds, memory in bytes.
struct LayoutEstimate {
    Layout layout;
    int64_t micro_batches = 0;   // per data-parallel replica and step
    double compute_s = 0.0;      // forward and backward (matrix products and element-wise ops)
    double recompute_s = 0.0;    // the forward passes recomputed in backward
    double bubble_s = 0.0;       // the pipeline's fill and drain
    double tensor_comm_s = 0.0;  // tensor-parallel all-reduces (on the critical path)
    double pipeline_comm_s = 0.0;  // activations and gradients sent between stages
    double data_comm_s = 0.0;    // the exposed part of the gradient all-reduce
    double data_comm_total_s = 0.0;  // all of it, before overlap
    double optimizer_s = 0.0;    // the optimizer's update
    double overhead_s = 0.0;     // the device's per-step overhead (catalog)
    double step_s = 0.0;

    double weight_bytes = 0.0;
    double gradient_bytes = 0.0;
    double optimizer_bytes = 0.0;
    double activation_bytes = 0.0;
    double memoryBytes() const { return weight_bytes + gradient_bytes + optimizer_bytes + activation_bytes; }
    double capacity_bytes = 0.0;
    bool fits = false;
    std::string why_not;  // when it does not fit: the memory and its parts

    double model_flops = 0.0;     // one step's forward and backward, no recomputation (6 x params-style)
    double hardware_flops = 0.0;  // with the recomputed forward passes, as Narayanan et al. count
    double model_tflops_per_gpu = 0.0;
    double hardware_tflops_per_gpu = 0.0;
    double tokens_per_s = 0.0;
    double usd_per_step = 0.0;
};

// Why `layout` cannot split `costs` at `global_batch` over `cluster`: "t=16 does not divide 96
// heads", "p=5 does not divide 96 layers", "d x p x t = 512, not the 1024 devices", ...; empty when
// it can. Structural only: memory is the estimate's.
std::string layoutProblem(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                          const Layout& layout);

// The estimate of a layout that layoutProblem() accepts (std::invalid_argument with its problem
// otherwise, or when the device is not a GPU with NVLink figures).
LayoutEstimate estimateLayout(const TransformerCosts& costs, int64_t global_batch, const GpuCluster& cluster,
                              const Layout& layout, const LayoutAssumptions& assumptions = {});

}  // namespace trainbench::engine
