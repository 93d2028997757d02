// Actions for a memory-bound run. Bandwidth: a bigger batch raises the arithmetic intensity of
// weight-bound ops (each weight is read once per batch, used once per example). Capacity
// (domain.md: more memory per worker; (not ideal) fewer layers, smaller batch): activations scale
// with the batch, parameters, gradients and optimizer state do not.
#include <algorithm>
#include <optional>
#include <string>

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

namespace {

// A pipeline of s.stages GPUs instead of one: each holds its stages' weights, gradients and optimizer
// state and the activations of the micro-batches in flight (domain.md: model parallelism).
std::optional<Candidate> pipelineSplitAction(const ActionContext& ctx, const PipelineSplit& s) {
    const ExperimentView& v = ctx.experiment;
    const MemoryFootprint& m = *ctx.input.memory;
    const double k = s.stages, micro = s.micro_batches;
    const double bubble = (k - 1.0) / (micro + k - 1.0);
    std::string expected =
        "Each stage's GPU holds its layers' weights, gradients and optimizer state and the activations of the "
        "micro-batches in flight: about " + text::megabytes(s.needed_bytes) + " MB on the fullest (" +
        text::percent(s.needed_bytes / s.capacity_bytes) + " % of one GPU's " + text::megabytes(s.capacity_bytes) +
        " MB, activations " + text::megabytes(s.activation_bytes) + " MB), against " + text::megabytes(m.modelBytes()) +
        " MB now. ";
    const bool pipeline = v.strategy() == engine::StrategyKind::Pipeline;
    const int64_t now = pipeline ? v.integer("strategy.stages") : 1;
    if (s.stages != now)
        expected += std::to_string(s.stages) + " GPUs are charged instead of " + std::to_string(now) + ". ";
    expected += "Each step idles about " + text::percent(bubble) + " % filling and draining the pipeline ((K-1)/(M+K-1)).";
    if (s.recompute) expected += " Recomputation runs each micro-batch's forward again before its backward.";
    const std::string title = s.stages == now && s.recompute
                                  ? "Recompute activations in each stage"
                                  : "Split the model into " + std::to_string(s.stages) + " pipeline stages" +
                                        (s.recompute ? " with recomputation" : "");
    return catalogue::make(
        BoundKind::MemoryCapacity, title,
        {v.change("strategy.type", "pipeline"), v.change("strategy.stages", s.stages),
         v.change("strategy.micro_batches", s.micro_batches), s.recompute ? v.change("strategy.recompute", true) : std::nullopt},
        expected, std::nullopt,
        "domain.md: a model too big for one device is split across devices (pipeline: K stages, M micro-batches; "
        "recomputation trades a second forward for memory).");
}

}  // namespace

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
    // One emulated GPU near capacity: the run recorded the pipeline splits that fit (fewest stages first).
    if (ctx.input.memory)
        for (const PipelineSplit& s : ctx.input.memory->splits) push(pipelineSplitAction(ctx, s));
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
