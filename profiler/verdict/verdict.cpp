// classify(): the run's verdict (rules.h) over the steps after warm-up, its further findings, the
// timeline over all steps, and the ranked actions (actions.cpp).
#include "profiler/verdict/verdict.h"

#include <algorithm>
#include <array>
#include <utility>

#include "profiler/verdict/actioncatalogue.h"
#include "profiler/verdict/evidencetext.h"
#include "profiler/verdict/rules.h"
#include "profiler/verdict/stepfindings.h"
#include "profiler/verdict/windows.h"

namespace trainbench::profiler {

namespace {

constexpr std::array<std::pair<BoundKind, const char*>, 6> kKindNames{{
    {BoundKind::Input, "input"},
    {BoundKind::Compute, "compute"},
    {BoundKind::MemoryBandwidth, "memory_bandwidth"},
    {BoundKind::MemoryCapacity, "memory_capacity"},
    {BoundKind::Communication, "communication"},
    {BoundKind::Balanced, "balanced"},
}};
constexpr std::array<std::pair<Severity, const char*>, 3> kSeverityNames{{
    {Severity::High, "high"},
    {Severity::Moderate, "moderate"},
    {Severity::Low, "low"},
}};

bool hasEvidence(const Finding& f, const std::string& name) {
    return std::any_of(f.evidence.begin(), f.evidence.end(), [&](const Evidence& e) { return e.name == name; });
}

// What every verdict says besides its own numbers: the input and exchange shares (so a compute
// verdict shows how little input there was), the steps it covers, and the time between steps.
void addRunEvidence(Finding& verdict, const StepTotals& considered, size_t total, const CapacityCheck& capacity,
                    const std::optional<MemoryFootprint>& memory) {
    for (Evidence& e : windowEvidence(considered)) {
        // A run without an exchange has nothing to say about it.
        if (e.name == "comm_fraction" && considered.exposed_comm_seconds <= 0) continue;
        if (!hasEvidence(verdict, e.name)) verdict.evidence.push_back(std::move(e));
    }
    const size_t skipped = total - static_cast<size_t>(considered.count);
    verdict.evidence.push_back(
        {"steps_considered", static_cast<double>(considered.count), "steps",
         "steps " + std::to_string(considered.first_step) + "-" + std::to_string(considered.last_step) + ", " +
             std::to_string(considered.count) + " of " + std::to_string(total) +
             (skipped > 0 ? " (the first " + std::to_string(skipped) + " skipped as warm-up)" : std::string())});
    if (considered.step > 0 && rules::reaches(considered.evalCheckpointFraction(), rules::kEvalCheckpointFinding))
        verdict.evidence.push_back(text::percentEvidence(
            "eval_checkpoint_fraction", considered.evalCheckpointFraction(),
            text::percent(considered.evalCheckpointFraction()) + " % of training wall time in evaluation (" +
                text::fixed(considered.eval_seconds) + " s) and checkpoints (" + text::fixed(considered.checkpoint_seconds) +
                " s) between steps (>= 20 %: see the actions)"));
    if (auto swap = unrelatedSwapEvidence(capacity, memory)) verdict.evidence.push_back(std::move(*swap));
}

}  // namespace

std::string verdictLabel(BoundKind kind, Severity severity) {
    const char* what = "balanced";
    switch (kind) {
        case BoundKind::Input: what = "input-bound"; break;
        case BoundKind::Compute: what = "compute-bound"; break;
        case BoundKind::MemoryBandwidth: what = "memory-bound, bandwidth"; break;
        case BoundKind::MemoryCapacity: what = "memory-bound, capacity"; break;
        case BoundKind::Communication: what = "communication-bound"; break;
        case BoundKind::Balanced: break;
    }
    return std::string(what) + " (" + severityName(severity) + ")";
}

const char* boundKindName(BoundKind kind) {
    for (const auto& [k, name] : kKindNames)
        if (k == kind) return name;
    return "balanced";
}

const char* severityName(Severity severity) {
    for (const auto& [s, name] : kSeverityNames)
        if (s == severity) return name;
    return "low";
}

std::optional<BoundKind> boundKindFromName(const std::string& name) {
    for (const auto& [k, n] : kKindNames)
        if (name == n) return k;
    return std::nullopt;
}

std::optional<Severity> severityFromName(const std::string& name) {
    for (const auto& [s, n] : kSeverityNames)
        if (name == n) return s;
    return std::nullopt;
}

Verdict classify(const ProfileInput& input) {
    const size_t n = input.steps.size();
    const StepTotals considered = sumSteps(input.steps, warmupSteps(n), n);
    const StepTotals all = sumSteps(input.steps, 0, n);
    const OpMix mix = opMix(input);
    const CapacityCheck capacity = checkCapacity(input.memory, all.step + all.eval_seconds + all.checkpoint_seconds);

    RunFacts facts;
    if (capacity.bound()) facts.capacity = capacityFinding(capacity, *input.memory);
    facts.roofline = rooflineFinding(mix);
    const ExperimentView experiment(input.experiment);
    facts.emulated = experiment.emulatedDevice();
    if (experiment.strategy() == engine::StrategyKind::Pipeline)
        facts.pipeline = PipelineShape{static_cast<int>(experiment.integer("strategy.stages")),
                                       static_cast<int>(experiment.integer("strategy.micro_batches"))};
    if (experiment.strategy() == engine::StrategyKind::Tensor)
        facts.tensorDevices = static_cast<int>(experiment.integer("strategy.tensor"));
    if (all.compute() > 0) facts.op_share_of_compute = mix.op_seconds_per_replica / all.compute();

    Decision decision = decide(considered, facts, overheadFinding(all, mix, facts.emulated));
    addRunEvidence(decision.verdict, considered, n, capacity, input.memory);

    Verdict v;
    v.windows = timeline(input.steps, facts);
    v.actions = rankActions({input, experiment, considered, mix, capacity, decision});
    v.verdict = std::move(decision.verdict);
    v.findings = std::move(decision.further);
    return v;
}

}  // namespace trainbench::profiler
