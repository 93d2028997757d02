// Actions for a compute-bound run (domain.md: faster accelerator, newer processor, TPUs; (not
// ideal) simpler model, cheaper activation, fewer steps). More threads comes first where the run
// left cores idle: it is the one faster processor the experiment itself can ask for.
#include <algorithm>

#include "profiler/verdict/actioncatalogue.h"
#include "profiler/verdict/evidencetext.h"
#include "profiler/verdict/rules.h"

namespace trainbench::profiler {

namespace {

using catalogue::factor;

// The run's compute threads (per replica) against the host's cores; nothing when either is unknown
// or the run already used every core ("0 = all cores").
std::optional<Candidate> moreThreads(const ActionContext& ctx) {
    const ExperimentView& v = ctx.experiment;
    const int host = ctx.input.host_cores;
    if (host <= 0) return std::nullopt;
    // An emulated device's time is its virtual clock's: this host's threads do not change it.
    if (v.emulatedDevice()) return std::nullopt;
    const bool single = v.strategy() == engine::StrategyKind::Single;
    const std::string key = single ? "train.threads" : "strategy.threads_per_replica";
    const int64_t given = v.integer(key);
    if (given == 0) return std::nullopt;
    const int64_t replicas = single ? 1 : std::max<int64_t>(1, v.integer("strategy.replicas"));
    const int64_t want = std::max<int64_t>(1, host / replicas);
    const int64_t used = ctx.input.threads > 0 ? ctx.input.threads : given;
    if (used >= want) return std::nullopt;
    const StepTotals& t = ctx.steps;
    // Amdahl: only the compute phases scale, at best linearly.
    const double compute = t.compute() > 0 ? t.compute() : std::max(0.0, t.step - t.input_seconds - t.exposed_comm_seconds);
    const double after = t.step - compute + compute * static_cast<double>(used) / static_cast<double>(want);
    const std::optional<double> speedup =
        t.step > 0 && after > 0 ? std::optional<double>(catalogue::capSpeedup(t.step / after)) : std::nullopt;
    return catalogue::make(
        BoundKind::Compute, "Use all " + std::to_string(host) + " cores", {v.change(key, want)},
        std::to_string(used) + " compute thread(s) per replica on a host with " + std::to_string(host) +
            " cores; with " + std::to_string(want) + ", at most " + factor(speedup.value_or(1.0)) +
            " (compute phases scaling linearly). On a shared machine other work competes for the cores.",
        speedup, "Underpowered hardware: give the computation the processor it has.");
}

// The overhead finding's share of step time outside the ops, when the run has one.
std::optional<double> outsideOpsShare(const Decision& d) {
    auto find = [](const Finding& f) -> std::optional<double> {
        for (const Evidence& e : f.evidence)
            if (e.name == "outside_ops_fraction") return e.value / 100.0;
        return std::nullopt;
    };
    if (auto share = find(d.verdict)) return share;
    for (const Finding& f : d.further)
        if (auto share = find(f)) return share;
    return std::nullopt;
}

// Time outside the ops is a cost per step, not per example: twice the batch spreads it over twice
// the samples. With O that share of a step, the step of twice the batch takes O + 2(1 - O), so
// samples per second grow by 2 / (2 - O).
std::optional<Candidate> amortiseOverhead(const ActionContext& ctx) {
    const std::optional<double> share = outsideOpsShare(ctx.decision);
    if (!share) return std::nullopt;
    const ExperimentView& v = ctx.experiment;
    const int64_t batch = v.integer("train.batch_size");
    const double speedup = catalogue::capSpeedup(2.0 / (2.0 - std::min(*share, 1.0)));
    return catalogue::make(
        BoundKind::Compute, "Double the batch", {v.change("train.batch_size", batch * 2)},
        text::percent(*share) + " % of the step is outside the ops, a cost per step rather than per example: " +
            "twice the examples per step take it from " + text::percent(*share) + " % to about " +
            text::percent(*share / (2.0 - *share)) + " % of the step, " + factor(speedup) + " samples per second." +
            catalogue::batchMemoryNote(ctx, 2.0) + " Scale the learning rate with the batch.",
        speedup, "Fixed per-step costs (dispatch, host, synchronisation) are amortised by more work per step.");
}

}  // namespace

std::vector<Candidate> computeActions(const ActionContext& ctx) {
    const ExperimentView& v = ctx.experiment;
    std::vector<Candidate> out;
    auto push = [&](std::optional<Candidate> c) {
        if (c) out.push_back(std::move(*c));
    };
    push(moreThreads(ctx));
    push(amortiseOverhead(ctx));
    const OpMix& m = ctx.mix;
    if (m.roofline && rules::reaches(m.leftShare(), rules::kRooflineMajority) &&
        m.leftGBs() < rules::kNearBandwidthRoof * m.bandwidth_gbs) {
        const int64_t batch = v.integer("train.batch_size");
        push(catalogue::make(
            BoundKind::Compute, "Double the batch", {v.change("train.batch_size", batch * 2)},
            "Ops left of the ridge run far below the bandwidth roof (" + text::percent(m.leftGBs() / m.bandwidth_gbs) +
                " %): small ops pay per-call costs that a larger batch spreads over twice the samples." +
                catalogue::batchMemoryNote(ctx, 2.0) + " Scale the learning rate with the batch.",
            std::nullopt, "Latency- and overhead-bound ops do more work per call on bigger tensors."));
    }
    const double target = v.number("train.target_accuracy");
    if (target > 0 && !v.flag("train.stop_at_target"))
        push(catalogue::make(
            BoundKind::Compute, "Stop at the target accuracy", {v.change("train.stop_at_target", true)},
            "The run ends when test accuracy first reaches " + text::percent(target) +
                " %: no steps after it (time-to-accuracy is unchanged).",
            std::nullopt, "domain.md: compute-bound, (not ideal) fewer steps; accuracy gained after the target is lost.",
            true));
    if (v.at("model.preset") == "cnn")
        push(catalogue::make(
            BoundKind::Compute, "Use the smaller mlp model", {v.change("model.preset", "mlp")},
            "The mlp preset does far fewer FLOPs per example than the cnn (no convolutions), at lower accuracy on "
            "images.",
            std::nullopt, "domain.md: compute-bound, (not ideal) simpler model.", true));
    out.push_back(catalogue::textOnly(
        BoundKind::Compute, "Run on a faster processor or an accelerator",
        "A newer processor, a GPU or a TPU raises the compute roof the ops are under.",
        "domain.md: compute-bound, faster accelerator, newer processor, TPUs."));
    return out;
}

}  // namespace trainbench::profiler
