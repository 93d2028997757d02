// Actions for a memory-bound run. Bandwidth: a bigger batch raises the arithmetic intensity of
// weight-bound ops (each weight is read once per batch, used once per example). Capacity
// (domain.md: more memory per worker; (not ideal) fewer layers, smaller batch): activations scale
// with the batch, parameters, gradients and optimizer state do not.
#include <algorithm>

#include "profiler/verdict/actioncatalogue.h"
#include "profiler/verdict/evidencetext.h"

namespace trainbench::profiler {

std::vector<Candidate> bandwidthActions(const ActionContext& ctx) {
    const ExperimentView& v = ctx.experiment;
    const OpMix& m = ctx.mix;
    const StepTotals& t = ctx.steps;
    std::vector<Candidate> out;
    const int64_t batch = v.integer("train.batch_size");
    // Share of the step in ops left of the ridge; at best their time per example halves.
    const double opShare = t.step > 0 ? std::min(1.0, m.op_seconds_per_replica / t.step) : 0.0;
    const double left = m.leftShare() * opShare;
    const double speedup = catalogue::capSpeedup(1.0 / (1.0 - left / 2.0));
    auto a = catalogue::make(
        BoundKind::MemoryBandwidth, "Double the batch", {v.change("train.batch_size", batch * 2)},
        "Ops left of the ridge take " + text::percent(left) +
            " % of the step; weight-bound ones read their weights once per batch, so their time per example falls, "
            "at most by half: at most " + catalogue::factor(speedup) + " samples per second." + catalogue::batchMemoryNote(ctx, 2.0) +
            " Scale the learning rate with the batch.",
        speedup, "Raise arithmetic intensity: more FLOPs per byte moved moves ops toward the ridge.");
    if (a) out.push_back(std::move(*a));
    out.push_back(catalogue::textOnly(
        BoundKind::MemoryBandwidth, "Run on a device with more memory bandwidth",
        "A higher bandwidth roof lifts every op left of the ridge.",
        "The ops wait for memory, near the bandwidth roof."));
    return out;
}

std::vector<Candidate> capacityActions(const ActionContext& ctx) {
    const ExperimentView& v = ctx.experiment;
    std::vector<Candidate> out;
    auto push = [&](std::optional<Candidate> c) {
        if (c) out.push_back(std::move(*c));
    };
    const engine::StrategyKind strategy = v.strategy();
    const int64_t replicas = strategy == engine::StrategyKind::Single ? 1 : v.integer("strategy.replicas");
    const int64_t batch = v.integer("train.batch_size");
    // A synchronous global batch below the replica count leaves replicas without examples.
    const bool global = strategy != engine::StrategyKind::ParameterServer;
    if (batch / 2 >= (global ? replicas : 1)) {
        std::string expected = "Activations scale with the batch";
        if (ctx.capacity.recorded && ctx.input.memory) {
            const MemoryFootprint& m = *ctx.input.memory;
            const double after = ctx.capacity.footprint_bytes - m.activation_bytes / 2;
            expected += ": footprint " + text::megabytes(ctx.capacity.footprint_bytes) + " MB -> about " +
                        text::megabytes(after) + " MB, " + text::percent(after / m.device_bytes) +
                        " % of the device's " + text::megabytes(m.device_bytes) + " MB";
        }
        push(catalogue::make(BoundKind::MemoryCapacity, "Halve the batch", {v.change("train.batch_size", batch / 2)},
                             expected + ". Scale the learning rate down with the batch.", std::nullopt,
                             "domain.md: memory-bound, (not ideal) smaller batch.", true));
    }
    if (strategy == engine::StrategyKind::Mirrored && replicas >= 2 && ctx.input.memory && ctx.input.memory->device_source == "host RAM")
        push(catalogue::make(
            BoundKind::MemoryCapacity, "Halve the replicas", {v.change("strategy.replicas", replicas / 2)},
            "Mirrored replicas each hold a copy of the model and optimizer state in this process's memory; half as "
            "many copies, at the cost of parallelism.",
            std::nullopt, "Fewer model copies in host RAM.", true));
    out.push_back(catalogue::textOnly(
        BoundKind::MemoryCapacity, "Give each worker more memory",
        "A device or machine with more memory keeps the weights, gradients and activations resident "
        "(device.memory_mb only describes the device the run stands for; it does not add memory).",
        "domain.md: memory-bound, more memory per worker."));
    out.push_back(catalogue::textOnly(
        BoundKind::MemoryCapacity, "Use fewer or narrower layers",
        "Fewer parameters shrink weights, gradients and optimizer state together; accuracy may drop.",
        "domain.md: memory-bound, (not ideal) fewer layers."));
    return out;
}

}  // namespace trainbench::profiler
