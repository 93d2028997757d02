#pragma once
// Rules 1-5 of rules.h applied to one set of steps: the verdict and the further findings, in
// priority order. The run's verdict and every window of the timeline are decided here.
#include <optional>
#include <vector>

#include "profiler/verdict/breakdown.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

// What holds for the whole run whichever steps are looked at (memory, op statistics).
// A pipeline run's shape (strategy.type "pipeline"): its blocked time is the stages waiting on
// one another, not a gradient exchange.
struct PipelineShape {
    int stages = 1;
    int micro = 1;
    double idealBubble() const { return static_cast<double>(stages - 1) / static_cast<double>(micro + stages - 1); }
};

struct RunFacts {
    std::optional<Finding> capacity;  // rule 1, when it holds
    std::optional<Finding> roofline;  // rule 4, when roofs and op stats exist
    // For a window's overhead (rule 4a): the run's op seconds (per replica) per second of its compute
    // phases, 0 without op statistics (op stats are per run, so a window is taken to have the
    // run's share), and whether the device is emulated (the evidence's wording).
    double op_share_of_compute = 0.0;
    bool emulated = false;
    std::optional<PipelineShape> pipeline;
    // A tensor-parallel run (strategy.type "tensor"): its devices; its blocked time is the
    // activations' all-reduces inside the step.
    std::optional<int> tensorDevices;
};

struct Decision {
    Finding verdict;
    std::vector<Finding> further;  // every other rule that holds, most important first
};

// `overhead`: the overhead finding of these steps (the whole run's for the run's verdict). At
// high severity (>= 50 % of step time outside the ops) it comes before the roofline, which then
// describes the lesser part of the step; otherwise after every rule.
Decision decide(const StepTotals& steps, const RunFacts& facts, std::optional<Finding> overhead);

}  // namespace trainbench::profiler
