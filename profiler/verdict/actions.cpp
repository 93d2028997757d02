// Ranking the catalogue's actions, and the actions for time spent between steps.
//
// Order, best first (a stable sort, so within a tier the catalogue's order holds):
//   0. concrete changes addressing the verdict's bound;
//   1. concrete changes addressing a further finding's bound (in the findings' order);
//   2. evaluating / checkpointing less often, when that time is >= 20 % of training wall time;
//   3. domain.md's "(not ideal)" changes (they cost accuracy, convergence or parallelism);
//   4. suggestions that are no change to the experiment (faster hardware, more memory): they cannot
//      be run as a new experiment, so they come last and say so in their title.
// When memory capacity is the verdict or a further finding, no action that raises the batch is
// kept (it would grow the activations). An action whose changes repeat an earlier one's is dropped.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "profiler/verdict/actioncatalogue.h"
#include "profiler/verdict/evidencetext.h"
#include "profiler/verdict/rules.h"

namespace trainbench::profiler {

namespace catalogue {

std::optional<Candidate> make(BoundKind addresses, std::string title, std::vector<std::optional<Change>> changes,
                              std::string expected, std::optional<double> speedup, std::string rationale,
                              bool not_ideal) {
    Candidate c;
    c.not_ideal = not_ideal;
    c.action.addresses = addresses;
    c.action.title = std::move(title) + (not_ideal ? " (not ideal)" : "");
    for (std::optional<Change>& change : changes)
        if (change) c.action.changes.push_back(std::move(*change));
    if (c.action.changes.empty()) return std::nullopt;
    c.action.expected = std::move(expected);
    c.action.expected_speedup = speedup;
    c.action.rationale = std::move(rationale);
    return c;
}

Candidate textOnly(BoundKind addresses, std::string title, std::string expected, std::string rationale) {
    Candidate c;
    c.action.addresses = addresses;
    c.action.title = std::move(title) + " (no experiment change)";
    c.action.expected = std::move(expected);
    c.action.rationale = std::move(rationale) + " Not a change to the experiment: it cannot be run as a new experiment.";
    return c;
}

std::string factor(double speedup) { return "x" + text::fixed(speedup, 2); }

double capSpeedup(double speedup) { return std::clamp(speedup, 1.0, kMaxSpeedup); }

std::string batchMemoryNote(const ActionContext& ctx, double scale) {
    if (!ctx.capacity.recorded || !ctx.input.memory) return "";
    const MemoryFootprint& m = *ctx.input.memory;
    const double after = ctx.capacity.footprint_bytes + m.activation_bytes * (scale - 1.0);
    const double fraction = after / m.device_bytes;
    std::string note = " Activations scale with the batch: footprint " + text::megabytes(ctx.capacity.footprint_bytes) +
                       " MB -> about " + text::megabytes(after) + " MB, " + text::percent(fraction) +
                       " % of the device's memory";
    note += rules::reaches(fraction, kCapacityFraction) ? " (past the 90 % line: it may not fit)." : ".";
    return note;
}

}  // namespace catalogue

std::vector<Candidate> betweenStepsActions(const ActionContext& ctx) {
    const StepTotals& t = ctx.steps;
    std::vector<Candidate> out;
    if (t.step <= 0 || !rules::reaches(t.evalCheckpointFraction(), rules::kEvalCheckpointFinding)) return out;
    const double wall = t.step + t.eval_seconds + t.checkpoint_seconds;
    // Spread them out until they are about 10 % of step time, 2x to 10x.
    auto spread = [&](double seconds) { return std::clamp(std::ceil(seconds / (0.10 * t.step)), 2.0, 10.0); };
    const int64_t evalEvery = ctx.experiment.integer("train.eval_every_steps");
    if (t.eval_seconds > 0 && evalEvery > 0) {
        const double k = spread(t.eval_seconds);
        const double speedup = wall / (t.step + t.eval_seconds / k + t.checkpoint_seconds);
        auto a = catalogue::make(
            BoundKind::Balanced, "Evaluate less often",
            {ctx.experiment.change("train.eval_every_steps", evalEvery * static_cast<int64_t>(k))},
            "Evaluation takes " + text::percent(t.eval_seconds / wall) + " % of training wall time; every " +
                std::to_string(evalEvery * static_cast<int64_t>(k)) + " steps instead of " + std::to_string(evalEvery) +
                " it takes about " + text::percent(t.eval_seconds / k / (wall - t.eval_seconds + t.eval_seconds / k)) + " %: " +
                catalogue::factor(speedup) + " wall time per step (training throughput unchanged).",
            speedup,
            "Time between steps is not training: fewer evaluations reach the same step sooner, at the price of a "
            "coarser accuracy curve and a later notice of the target accuracy.");
        if (a) out.push_back(std::move(*a));
    }
    const int64_t ckptEvery = ctx.experiment.integer("train.checkpoint_every_steps");
    if (t.checkpoint_seconds > 0 && ckptEvery > 0) {
        const double k = spread(t.checkpoint_seconds);
        const double speedup = wall / (t.step + t.eval_seconds + t.checkpoint_seconds / k);
        auto a = catalogue::make(
            BoundKind::Balanced, "Checkpoint less often",
            {ctx.experiment.change("train.checkpoint_every_steps", ckptEvery * static_cast<int64_t>(k))},
            "Checkpoints take " + text::percent(t.checkpoint_seconds / wall) + " % of training wall time; every " +
                std::to_string(ckptEvery * static_cast<int64_t>(k)) + " steps instead of " + std::to_string(ckptEvery) +
                ": " + catalogue::factor(speedup) + " wall time per step.",
            speedup,
            "A failed multi_worker or parameter_server job restarts from the last checkpoint, so up to " +
                text::fixed(k, 0) + "x more steps are repeated after a failure.");
        if (a) out.push_back(std::move(*a));
    }
    return out;
}

namespace {

std::vector<Candidate> forKind(BoundKind kind, const ActionContext& ctx) {
    switch (kind) {
    case BoundKind::Input: return inputActions(ctx);
    case BoundKind::Communication: return communicationActions(ctx);
    case BoundKind::Compute: return computeActions(ctx);
    case BoundKind::MemoryBandwidth: return bandwidthActions(ctx);
    case BoundKind::MemoryCapacity: return capacityActions(ctx);
    case BoundKind::Balanced: return {};
    }
    return {};
}

// Changes as text, to find an action that repeats another.
std::string identity(const Action& a) {
    if (a.changes.empty()) return "text:" + a.title;
    std::string id;
    for (const Change& c : a.changes) id += c.key + "=" + c.to.dump() + ";";
    return id;
}

bool raisesBatch(const Action& a, const ExperimentView& experiment) {
    for (const Change& c : a.changes)
        if (c.key == "train.batch_size" && c.to.is_number() &&
            c.to.get<double>() > static_cast<double>(experiment.integer("train.batch_size")))
            return true;
    return false;
}

}  // namespace

std::vector<Action> rankActions(const ActionContext& ctx) {
    const Decision& d = ctx.decision;
    std::vector<BoundKind> kinds{d.verdict.kind};
    for (const Finding& f : d.further)
        if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end()) kinds.push_back(f.kind);
    const bool capacity = std::find(kinds.begin(), kinds.end(), BoundKind::MemoryCapacity) != kinds.end();

    struct Ranked {
        int tier;
        Action action;
    };
    std::vector<Ranked> ranked;
    auto add = [&](std::vector<Candidate> candidates, int concreteTier) {
        for (Candidate& c : candidates) {
            const int tier = c.action.changes.empty() ? 4 : c.not_ideal ? 3 : concreteTier;
            ranked.push_back({tier, std::move(c.action)});
        }
    };
    for (BoundKind kind : kinds) add(forKind(kind, ctx), kind == d.verdict.kind ? 0 : 1);
    add(betweenStepsActions(ctx), 2);
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) { return a.tier < b.tier; });

    std::vector<Action> out;
    std::set<std::string> seen;
    for (Ranked& r : ranked) {
        if (capacity && raisesBatch(r.action, ctx.experiment)) continue;
        if (!seen.insert(identity(r.action)).second) continue;
        out.push_back(std::move(r.action));
    }
    return out;
}

}  // namespace trainbench::profiler
