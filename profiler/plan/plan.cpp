#include "profiler/plan/plan.h"

#include <algorithm>
#include <limits>

namespace trainbench::profiler {

const char* planSourceName(PlanSource source) {
    switch (source) {
        case PlanSource::Measured: return "measured";
        case PlanSource::Emulated: return "emulated";
        case PlanSource::Projected: return "projected";
    }
    return "?";
}

Plan rankPlan(std::vector<PlanCandidate> candidates, PlanLimits limits, PlanOrder order) {
    const double inf = std::numeric_limits<double>::infinity();
    auto time = [&](const PlanCandidate& c) { return c.seconds.value_or(inf); };
    auto cost = [&](const PlanCandidate& c) { return c.seconds && c.cost ? *c.cost : inf; };
    std::stable_sort(candidates.begin(), candidates.end(), [&](const PlanCandidate& a, const PlanCandidate& b) {
        if (a.seconds.has_value() != b.seconds.has_value()) return a.seconds.has_value();
        if (order == PlanOrder::Cost && cost(a) != cost(b)) return cost(a) < cost(b);
        if (time(a) != time(b)) return time(a) < time(b);
        return cost(a) < cost(b);
    });
    Plan plan;
    plan.limits = limits;
    for (PlanCandidate& c : candidates) {
        PlanRow row;
        if (c.seconds) {
            row.meets_deadline = !limits.deadline_seconds || *c.seconds <= *limits.deadline_seconds;
            if (c.cost) row.meets_budget = !limits.budget || *c.cost <= *limits.budget;
            else if (!limits.budget) row.meets_budget = true;  // nothing to meet
        }
        row.candidate = std::move(c);
        plan.rows.push_back(std::move(row));
    }
    for (size_t i = 0; i < plan.rows.size(); ++i) {
        const PlanRow& r = plan.rows[i];
        if (!r.candidate.seconds) continue;
        if (r.meets_budget.value_or(false)) {
            const auto& best = plan.fastest_within_budget;
            if (!best || time(r.candidate) < time(plan.rows[*best].candidate)) plan.fastest_within_budget = i;
        }
        if (r.meets_deadline && r.candidate.cost) {
            const auto& best = plan.cheapest_within_deadline;
            if (!best || cost(r.candidate) < cost(plan.rows[*best].candidate)) plan.cheapest_within_deadline = i;
        }
    }
    return plan;
}

}  // namespace trainbench::profiler
