#pragma once
// The planner's answer: configurations ranked by time (or cost) to a target accuracy, each marked
// against a deadline and a budget, with the fastest within the budget and the cheapest within the
// deadline named. Configurations without a time to target come last.
#include <cstddef>
#include <optional>
#include <vector>

#include "profiler/plan/plancandidate.h"

namespace trainbench::profiler {

struct PlanLimits {
    std::optional<double> deadline_seconds;  // nullopt: no deadline
    std::optional<double> budget;            // USD; nullopt: no budget
};

enum class PlanOrder { Time, Cost };

struct PlanRow {
    PlanCandidate candidate;
    bool meets_deadline = false;       // reached within the deadline (or no deadline given)
    std::optional<bool> meets_budget;  // nullopt: cost unknown (no price), so nobody can say
    bool meetsBoth() const { return meets_deadline && meets_budget.value_or(false); }
};

struct Plan {
    PlanLimits limits;
    std::vector<PlanRow> rows;                       // ranked
    std::optional<size_t> fastest_within_budget;     // index into rows
    std::optional<size_t> cheapest_within_deadline;  // index into rows
};

// Ranks by time (ties: cheaper first) or by cost (unknown cost after known; ties: faster first).
Plan rankPlan(std::vector<PlanCandidate> candidates, PlanLimits limits, PlanOrder order = PlanOrder::Time);

}  // namespace trainbench::profiler
