#pragma once
// The action catalogue (internal): for each bound, the changes to the experiment that address it,
// from domain.md's table, each with its expected effect. rankActions() orders them (actions.cpp).
#include <string>
#include <vector>

#include "profiler/verdict/breakdown.h"
#include "profiler/verdict/capacity.h"
#include "profiler/verdict/decide.h"
#include "profiler/verdict/experimentkeys.h"
#include "profiler/verdict/roofline.h"

namespace trainbench::profiler {

// Everything an action's estimate may use.
struct ActionContext {
    const ProfileInput& input;
    const ExperimentView& experiment;
    const StepTotals& steps;  // the steps the verdict considered
    const OpMix& mix;
    const CapacityCheck& capacity;
    const Decision& decision;
};

struct Candidate {
    Action action;
    bool not_ideal = false;  // domain.md's "(not ideal)": it costs accuracy, convergence or scale
};

// Estimated speedups are capped: beyond this the model behind them says nothing useful.
inline constexpr double kMaxSpeedup = 10.0;

std::vector<Candidate> inputActions(const ActionContext& ctx);
std::vector<Candidate> communicationActions(const ActionContext& ctx);
std::vector<Candidate> computeActions(const ActionContext& ctx);
std::vector<Candidate> bandwidthActions(const ActionContext& ctx);
std::vector<Candidate> capacityActions(const ActionContext& ctx);
// Evaluation and checkpoints >= 20 % of training wall time: evaluate / checkpoint less often.
std::vector<Candidate> betweenStepsActions(const ActionContext& ctx);

// Ranked, best first (see actions.cpp for the order).
std::vector<Action> rankActions(const ActionContext& ctx);

// Helpers shared by the catalogue files.
namespace catalogue {

// An action from the changes that passed the range check; nothing if a required change did not.
std::optional<Candidate> make(BoundKind addresses, std::string title, std::vector<std::optional<Change>> changes,
                              std::string expected, std::optional<double> speedup, std::string rationale,
                              bool not_ideal = false);
// An action that is not a change to the experiment: ranked last, title says so.
Candidate textOnly(BoundKind addresses, std::string title, std::string expected, std::string rationale);
// "x1.25" with two decimals.
std::string factor(double speedup);
double capSpeedup(double speedup);
// `train.batch_size` doubled, with what it does to memory when the footprint is known.
std::string batchMemoryNote(const ActionContext& ctx, double factor);

}  // namespace catalogue

}  // namespace trainbench::profiler
