#include "profiler/tta/pretraining.h"

#include <charconv>
#include <set>

#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"

namespace trainbench::profiler {

namespace {

std::optional<int64_t> checkpointStep(RunStore& store, RunId run, std::string& problem) {
    for (const auto& [key, value] : store.attributes(run)) {
        if (key != runattr::kWarmStartStep) continue;
        int64_t step = 0;
        const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), step);
        if (ec != std::errc() || ptr != value.data() + value.size() || step < 0) {
            problem = "run " + std::to_string(run.value) + ": run attribute warm_start.step is '" + value +
                      "', not a step number";
            return std::nullopt;
        }
        return step;
    }
    return std::nullopt;
}

// The source's training up to `upTo` (all of it when absent), its own pre-training added; `seen`
// stops a chain that loops back on itself.
void addSource(RunStore& store, RunId sourceId, std::optional<int64_t> upTo, Pretraining& p, std::set<int64_t>& seen) {
    if (!seen.insert(sourceId.value).second) {
        p.seconds.reset();
        p.cost.reset();
        p.problem = "the warm starts of run " + std::to_string(sourceId.value) + " loop back to it";
        return;
    }
    const std::optional<RunRow> source = store.run(sourceId);
    if (!source) {
        p.seconds.reset();
        p.cost.reset();
        p.problem = "run " + std::to_string(sourceId.value) + " (warm-start source) is not in the store";
        return;
    }
    double seconds = 0.0;
    int64_t last = 0;
    for (const StepSample& s : store.steps(sourceId)) {
        if (upTo && s.step > *upTo) break;
        seconds += s.step_seconds;
        last = s.step;
    }
    if (!p.step) p.step = upTo.value_or(last);
    *p.seconds += seconds;
    const auto perSecond = source->costPerSecond();
    if (p.cost && perSecond) *p.cost += seconds * *perSecond;
    else p.cost.reset();
    if (!source->warm_start_run) return;
    std::string problem;
    const std::optional<int64_t> next = checkpointStep(store, source->id, problem);
    if (!problem.empty()) {
        p.seconds.reset();
        p.cost.reset();
        p.problem = problem;
        return;
    }
    addSource(store, RunId{*source->warm_start_run}, next, p, seen);
}

}  // namespace

std::optional<Pretraining> pretrainingOf(RunStore& store, const RunRow& run) {
    if (!run.warm_start_run) return std::nullopt;
    Pretraining p;
    p.source = RunId{*run.warm_start_run};
    p.seconds = 0.0;
    p.cost = 0.0;
    const std::optional<int64_t> upTo = checkpointStep(store, run.id, p.problem);
    if (!p.problem.empty()) {
        p.seconds.reset();
        p.cost.reset();
        return p;
    }
    std::set<int64_t> seen{run.id.value};
    addSource(store, p.source, upTo, p, seen);
    return p;
}

}  // namespace trainbench::profiler
