// trainbench-cli plan: which configuration reaches a target accuracy within a deadline and a budget.
// Seed groups of stored runs (measured or emulated), or the points of a sweep with the points
// without runs projected; ranked by time (or cost) to the target, unreachable ones last with why.
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/cli/storeaccess.h"
#include "app/cli/texttable.h"
#include "app/cli/ttatext.h"
#include "app/experiment/experimenterror.h"
#include "app/plan/plancandidates.h"
#include "profiler/plan/plan.h"
#include "profiler/store/storeerror.h"

namespace trainbench::cli {

namespace {

using nlohmann::json;
using profiler::Plan;
using profiler::PlanRow;

std::string yesNo(bool v) { return v ? "yes" : "no"; }
std::string budgetText(const PlanRow& r) {
    if (!r.candidate.seconds) return "-";
    return r.meets_budget ? yesNo(*r.meets_budget) : "unknown";
}

std::string runsText(const profiler::PlanCandidate& c) {
    if (c.source == profiler::PlanSource::Projected) return "-";
    std::string s = std::to_string(c.runs);
    if (c.pending) s += " +" + std::to_string(c.pending) + " running";
    return s;
}

json planJson(const Plan& plan, const profiler::TargetAccuracy& target, const std::string& order) {
    json rows = json::array();
    for (size_t i = 0; i < plan.rows.size(); ++i) {
        const PlanRow& r = plan.rows[i];
        const auto& c = r.candidate;
        json ids = json::array();
        for (const auto& id : c.run_ids) ids.push_back(id.value);
        rows.push_back({{"rank", i + 1}, {"label", c.label}, {"devices", c.devices}, {"strategy", c.strategy},
                        {"source", profiler::planSourceName(c.source)}, {"runs", c.runs}, {"reached", c.reached},
                        {"pending", c.pending}, {"seconds", jsonOr(c.seconds)}, {"cost", jsonOr(c.cost)},
                        {"steps", jsonOr(c.steps)}, {"step_seconds", jsonOr(c.step_seconds)}, {"note", c.note}, {"run_ids", ids}, {"meets_deadline", r.meets_deadline},
                        {"meets_budget", jsonOr(r.meets_budget)}, {"meets_both", r.meetsBoth()}, {"why", c.why}});
    }
    auto labelAt = [&](const std::optional<size_t>& i) { return i ? json(plan.rows[*i].candidate.label) : json(); };
    return {{"target", target.fraction()}, {"deadline_seconds", jsonOr(plan.limits.deadline_seconds)},
            {"budget", jsonOr(plan.limits.budget)}, {"order", order}, {"rows", rows},
            {"fastest_within_budget", labelAt(plan.fastest_within_budget)},
            {"cheapest_within_deadline", labelAt(plan.cheapest_within_deadline)}};
}

void printPlan(const Plan& plan, const profiler::TargetAccuracy& target, const std::string& order) {
    std::string limits;
    if (plan.limits.deadline_seconds) limits += " within " + profiler::formatDuration(*plan.limits.deadline_seconds);
    if (plan.limits.budget) limits += (limits.empty() ? " for " : " and ") + profiler::formatMoney(*plan.limits.budget);
    std::printf("plan: %s test accuracy%s, ranked by %s to the target\n\n", percentText(target.fraction()).c_str(),
                limits.c_str(), order.c_str());
    TextTable t({"#", "CONFIGURATION", "DEVICES", "SOURCE", "RUNS", "TIME", "COST", "DEADLINE", "BUDGET", "BOTH"});
    std::vector<const PlanRow*> never, projected;
    for (size_t i = 0; i < plan.rows.size(); ++i) {
        const PlanRow& r = plan.rows[i];
        const auto& c = r.candidate;
        if (c.source == profiler::PlanSource::Projected && c.seconds) projected.push_back(&r);
        if (!c.seconds) {
            never.push_back(&r);
            t.add({std::to_string(i + 1), c.label, c.devices, profiler::planSourceName(c.source), runsText(c),
                   "not reached", "-", "-", "-", "no"});
            continue;
        }
        t.add({std::to_string(i + 1), c.label, c.devices, profiler::planSourceName(c.source), runsText(c),
               timeText(c.seconds), costText(c.seconds, c.cost), plan.limits.deadline_seconds ? yesNo(r.meets_deadline) : "-",
               plan.limits.budget ? budgetText(r) : "-", yesNo(r.meetsBoth())});
    }
    t.print(stdout);
    std::printf("\n");
    auto name = [&](const std::optional<size_t>& i, const char* what, const char* none) {
        if (!i) {
            std::printf("%-26s %s\n", what, none);
            return;
        }
        const auto& c = plan.rows[*i].candidate;
        std::printf("%-26s %s (%s, %s)\n", what, c.label.c_str(), timeText(c.seconds).c_str(),
                    costText(c.seconds, c.cost).c_str());
    };
    name(plan.fastest_within_budget, plan.limits.budget ? "fastest within budget:" : "fastest:",
         "none (no configuration with a known cost within the budget)");
    name(plan.cheapest_within_deadline, plan.limits.deadline_seconds ? "cheapest within deadline:" : "cheapest:",
         "none (no configuration with a known cost within the deadline)");
    if (!projected.empty()) {
        std::printf("\nprojected: steps to target of the runs with the same numerics x the estimated step time on the "
                    "point's devices\n");
        for (const PlanRow* r : projected) std::printf("  %s: %s\n", r->candidate.label.c_str(), r->candidate.note.c_str());
    }
    if (!never.empty()) {
        std::printf("\nwithout a time to the target:\n");
        for (const PlanRow* r : never) std::printf("  %s: %s\n", r->candidate.label.c_str(), r->candidate.why.c_str());
    }
}

}  // namespace

int planCommand(const PlanArgs& args) {
    std::optional<profiler::TargetAccuracy> target;
    profiler::PlanLimits limits;
    try {
        target = profiler::TargetAccuracy::parse(args.target);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "--target: %s\n", e.what());
        return kExitUsage;
    }
    try {
        if (!args.deadline.empty()) limits.deadline_seconds = profiler::parseDuration(args.deadline, "--deadline");
        if (!args.budget.empty()) limits.budget = profiler::parseMoney(args.budget, "--budget");
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    }
    if (const std::string problem = args.filter.problem(); !problem.empty()) {
        std::fprintf(stderr, "%s\n", problem.c_str());
        return kExitUsage;
    }
    std::vector<app::PointEstimate> points;
    if (!args.experiment.empty()) {
        try {
            points = app::estimatePoints(app::loadSweepFile(args.experiment, args.overrides));
        } catch (const app::ExperimentError& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return kExitUsage;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "plan: %s: %s\n", args.experiment.c_str(), e.what());
            return kExitUsage;
        }
    }
    std::vector<profiler::RunTta> runs;
    if (std::filesystem::exists(args.db) || points.empty()) {
        int code = kExitOk;
        auto store = openExisting(args.db, code, /*emptyIsOk=*/true);
        if (!store) return code;
        try {
            runs = profiler::readTimeToAccuracy(*store, args.filter.apply(store->listRuns()), *target);
        } catch (const profiler::StoreError& e) {
            std::fprintf(stderr, "run store error: %s\n", e.what());
            return kExitStore;
        }
    }
    const auto groups = profiler::groupBySeed(runs);
    const app::CandidateOptions options{args.with_pretraining};
    auto candidates = points.empty() ? app::groupCandidates(runs, groups, options)
                                     : app::sweepCandidates(points, runs, groups, options);
    if (candidates.empty()) {
        std::printf("no runs match in %s: nothing to plan with\n", args.db.c_str());
        return kExitOk;
    }
    const Plan plan = profiler::rankPlan(std::move(candidates), limits,
                                         args.order == "cost" ? profiler::PlanOrder::Cost : profiler::PlanOrder::Time);
    if (args.json) std::printf("%s\n", planJson(plan, *target, args.order).dump(2).c_str());
    else printPlan(plan, *target, args.order);
    return kExitOk;
}

}  // namespace trainbench::cli
