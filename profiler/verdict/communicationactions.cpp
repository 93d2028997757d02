// Actions for a communication-bound run (design.md: bigger per-replica batch, fewer/faster links,
// async parameter servers for sparse models, gradient bucketing).
//
// Estimates: X = exposed exchange per step, S = step. The gradients' size does not depend on the
// batch, so a batch twice as large doubles the rest of the step and keeps X: samples per second
// grow by 2S / (2S - X). A ring all-reduce moves 2(N-1)/N of the gradients through each replica.
#include <cmath>

#include "profiler/verdict/actioncatalogue.h"
#include "profiler/verdict/evidencetext.h"

namespace trainbench::profiler {

namespace {

using catalogue::factor;

double ringShare(double n) { return n > 1 ? 2.0 * (n - 1.0) / n : 0.0; }

std::optional<Candidate> biggerBatch(const ActionContext& ctx) {
    const StepTotals& t = ctx.steps;
    const int64_t batch = ctx.experiment.integer("train.batch_size");
    const double s = t.step, x = t.exposed_comm_seconds;
    const double speedup = 2 * s - x > 0 ? catalogue::capSpeedup(2 * s / (2 * s - x)) : 1.0;
    return catalogue::make(
        BoundKind::Communication, "Double the batch", {ctx.experiment.change("train.batch_size", batch * 2)},
        "Twice the compute per exchange: the exchange's share of the step from " + text::percent(t.of(x)) +
            " % to about " + text::percent(2 * s - x > 0 ? x / (2 * s - x) : 0.0) + " %, " + factor(speedup) +
            " samples per second." + catalogue::batchMemoryNote(ctx, 2.0) +
            " Scale the learning rate with the batch (linear scaling rule) and check the accuracy.",
        speedup, "Gradient exchange dominates the synchronous step: a bigger per-replica batch amortises it.");
}

}  // namespace

std::vector<Candidate> communicationActions(const ActionContext& ctx) {
    const ExperimentView& v = ctx.experiment;
    const StepTotals& t = ctx.steps;
    std::vector<Candidate> out;
    auto push = [&](std::optional<Candidate> c) {
        if (c) out.push_back(std::move(*c));
    };
    const engine::StrategyKind strategy = v.strategy();
    if (strategy == engine::StrategyKind::Pipeline) {
        // A step of M micro-batches on K equal stages takes M+K-1 slots for M micro-batches' work:
        // twice the micro-batches (each half the size) spread the K-1 idle slots over twice the work.
        const double K = static_cast<double>(v.integer("strategy.stages"));
        const double M = static_cast<double>(v.integer("strategy.micro_batches"));
        const int64_t batch = v.integer("train.batch_size");
        if (2 * M <= static_cast<double>(batch)) {
            const double now = (M + K - 1) / M, then = (2 * M + K - 1) / (2 * M);
            const double speedup = catalogue::capSpeedup(now / then);
            out.push_back(*catalogue::make(
                BoundKind::Communication, "Double the micro-batches",
                {v.change("strategy.micro_batches", static_cast<int64_t>(2 * M))},
                "The schedule's bubble from " + text::percent((K - 1) / (M + K - 1)) + " % to " +
                    text::percent((K - 1) / (2 * M + K - 1)) + " % of the step: up to " + factor(speedup) +
                    " samples per second, less if the smaller micro-batches run the kernels less efficiently.",
                speedup, "Pipeline bubble: more micro-batches per step fill the pipe for longer."));
        }
        return out;
    }
    if (strategy == engine::StrategyKind::Tensor) {
        // Splitting each layer moves activations (batch x features) at every split pair, forward and
        // backward; replicas that each hold the whole model exchange only the gradients, once a step.
        const int64_t devices = v.integer("strategy.tensor");
        out.push_back(*catalogue::make(
            BoundKind::Communication, "Train data-parallel instead",
            {v.change("strategy.type", std::string("mirrored")), v.change("strategy.replicas", devices),
             v.change("strategy.tensor", static_cast<int64_t>(2))},
            "When the model fits one device, " + std::to_string(devices) +
                " replicas exchange only the gradients, once per step, instead of the activations at every split "
                "layer pair in forward and backward.",
            std::nullopt, "Tensor parallelism is for a model too large for one device; data parallelism exchanges less."));
        if (devices > 2)
            out.push_back(*catalogue::make(
                BoundKind::Communication, "Split across half the devices",
                {v.change("strategy.tensor", devices / 2)},
                "Each device does twice the work per all-reduce, and every all-reduce has half the peers.",
                std::nullopt, "Fewer tensor-parallel devices: more compute per exchanged activation."));
        return out;
    }
    const int64_t replicas = v.integer("strategy.replicas");
    // On emulated devices a job's hosts exchange over device.network_gbps: a faster network is a
    // change the run can try (on this host's CPU the processes talk over loopback).
    if ((strategy == engine::StrategyKind::MultiWorker || strategy == engine::StrategyKind::ParameterServer) && v.emulatedDevice()) {
        const double gbps = v.number("device.network_gbps");
        // Only the bandwidth part shrinks, and a parameter server's rounds may be bound by its updates:
        // for multi_worker an upper bound, for parameter_server none.
        std::optional<double> speedup;
        const double s = t.step, x = t.exposed_comm_seconds;
        if (strategy == engine::StrategyKind::MultiWorker && s - 0.75 * x > 0) speedup = catalogue::capSpeedup(s / (s - 0.75 * x));
        push(catalogue::make(
            BoundKind::Communication, "Four times the network bandwidth between hosts",
            {v.change("device.network_gbps", gbps * 4)},
            "The bandwidth part of every pull, push or all-reduce takes a quarter of the time" +
                (speedup ? ": at most " + factor(*speedup) + " samples per second (latency stays)." : std::string(".")),
            speedup, "Fewer, faster links: the exchange crosses each host's network link."));
    }
    if (strategy == engine::StrategyKind::ParameterServer) {
        const int64_t servers = v.integer("strategy.parameter_servers");
        push(catalogue::make(
            BoundKind::Communication, "Spread the variables over twice the parameter servers",
            {v.change("strategy.parameter_servers", servers * 2)},
            "Each pull and push goes to " + std::to_string(servers * 2) + " servers at once, each holding about half as "
            "much as now.",
            std::nullopt, "Fewer, faster links: no single server's link carries all the variables."));
        push(biggerBatch(ctx));
        return out;
    }
    if (strategy != engine::StrategyKind::Mirrored && strategy != engine::StrategyKind::MultiWorker) return out;

    if (!v.flag("strategy.overlap")) {
        // Data movement can hide behind backward; waiting for slower replicas cannot.
        const double movable = std::max(0.0, t.exposed_comm_seconds - t.wait);
        const double hidden = std::min(movable, t.backward_seconds);
        const double speedup = t.step - hidden > 0 ? catalogue::capSpeedup(t.step / (t.step - hidden)) : 1.0;
        push(catalogue::make(
            BoundKind::Communication, "All-reduce while backward runs", {v.change("strategy.overlap", true)},
            "Buckets are exchanged as their gradients are ready: up to " + text::percent(t.of(hidden)) +
                " % of step time hides behind backward, " + factor(speedup) + ".",
            speedup, "Gradient bucketing overlaps the exchange with the computation of earlier layers."));
    }
    push(biggerBatch(ctx));
    const double bucket = v.number("strategy.bucket_mb");
    if (bucket < 4.0)
        push(catalogue::make(
            BoundKind::Communication, "Exchange gradients in larger buckets", {v.change("strategy.bucket_mb", 4)},
            "Fewer, larger all-reduces: each pays the ring's per-message latency 2(N-1) times, so small buckets "
            "are latency-bound; larger ones start later behind backward.",
            std::nullopt, "Gradient bucketing: message size trades latency against overlap."));
    if (replicas >= 2) {
        const int64_t half = replicas / 2;
        std::optional<double> speedup;
        std::string expected = "Fewer replicas to wait for and fewer links per exchange";
        if (v.integer("strategy.threads_per_replica") == 0) {
            // The same cores split over fewer replicas: compute per step about the same.
            const double x = t.exposed_comm_seconds * ringShare(static_cast<double>(half)) / ringShare(static_cast<double>(replicas));
            const double after = t.step - t.exposed_comm_seconds + x;
            if (after > 0) speedup = catalogue::capSpeedup(t.step / after);
            expected += half == 1 ? std::string(": one replica exchanges nothing")
                                  : ": a ring all-reduce sends " + text::fixed(ringShare(static_cast<double>(half)), 2) +
                                        "x the gradients' size per replica instead of " +
                                        text::fixed(ringShare(static_cast<double>(replicas)), 2) + "x";
            expected += "; with the same cores given to " + std::to_string(half) + " replica(s), about " +
                        factor(speedup.value_or(1.0)) + " if the compute per step stays the same";
        }
        push(catalogue::make(
            BoundKind::Communication, "Halve the replicas", {v.change("strategy.replicas", half)},
            expected + ". The global batch stays, so each replica's batch doubles.", speedup,
            "Fewer links: on one host, replicas share the cores, so more of them mostly add exchange."));
    }
    push(catalogue::make(
        BoundKind::Communication, "Switch to asynchronous parameter servers",
        {v.change("strategy.type", std::string(engine::strategyKindName(engine::StrategyKind::ParameterServer)))},
        "No worker waits for the slowest at every step; gradients computed on stale parameters can delay "
        "convergence.",
        std::nullopt,
        "Async parameter servers suit sparse models with fewer features on CPU clusters; trainbench's models are "
        "dense, for which synchronous all-reduce is the better fit (domain.md).",
        true));
    return out;
}

}  // namespace trainbench::profiler
