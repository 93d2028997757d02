// trainbench-cli tta: time- and cost-to-accuracy of stored runs for any target, per run or per seed
// group (MLPerf's mean), warm-started runs with and without their pre-training.
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/cli/storeaccess.h"
#include "app/cli/texttable.h"
#include "app/cli/ttatext.h"
#include "profiler/grouping/seedgroup.h"
#include "profiler/store/storeerror.h"

namespace trainbench::cli {

namespace {

using nlohmann::json;
using profiler::GroupStatistic;
using profiler::RunTta;
using profiler::SeedGroup;

std::string withPretrainingText(const profiler::RunTimeToAccuracy& t) {
    if (!t.pretraining) return "-";
    if (!t.reached) return "-";
    if (!t.pretraining->seconds) return "unknown: " + t.pretraining->problem;
    return timeText(t.secondsWithPretraining()) + " / " + costText(t.secondsWithPretraining(), t.costWithPretraining());
}

json runJson(const RunTta& r) {
    const auto& t = r.tta;
    json j = {{"id", r.row.id.value}, {"name", r.row.name}, {"status", std::string(profiler::runStatusName(r.row.status))},
              {"clock", r.row.clock}, {"devices", r.row.devices}, {"reached", t.reached}, {"step", jsonOr(t.step)},
              {"seconds", jsonOr(t.seconds)}, {"eval_seconds", jsonOr(t.eval_seconds)}, {"cost", jsonOr(t.cost)},
              {"best_accuracy", jsonOr(t.best_accuracy)}, {"evaluations", t.evaluations}, {"warm_start", nullptr}};
    if (t.pretraining)
        j["warm_start"] = {{"source", t.pretraining->source.value}, {"step", jsonOr(t.pretraining->step)},
                           {"seconds", jsonOr(t.pretraining->seconds)}, {"cost", jsonOr(t.pretraining->cost)},
                           {"problem", t.pretraining->problem}, {"seconds_with_pretraining", jsonOr(t.secondsWithPretraining())},
                           {"cost_with_pretraining", jsonOr(t.costWithPretraining())}};
    return j;
}

json statJson(const GroupStatistic& s) {
    return {{"runs", s.runs}, {"reached", s.reached}, {"dropped", s.dropped}, {"seconds", jsonOr(s.seconds)},
            {"cost", jsonOr(s.cost)}, {"min_seconds", jsonOr(s.min_seconds)}, {"max_seconds", jsonOr(s.max_seconds)},
            {"stddev_seconds", jsonOr(s.stddev_seconds)}};
}

json groupJson(const SeedGroup& g, const std::vector<SeedGroup>& groups, const std::vector<RunTta>& runs) {
    json ids = json::array();
    for (size_t i : g.members) ids.push_back(runs[i].row.id.value);
    json j = {{"label", g.label}, {"runs", ids}, {"pending", g.pending}, {"time", statJson(g.time)},
              {"warm_started", g.warm_started}, {"with_pretraining", nullptr}, {"from_scratch", nullptr}};
    if (g.with_pretraining) j["with_pretraining"] = statJson(*g.with_pretraining);
    if (g.from_scratch) {
        const SeedGroup& s = groups[*g.from_scratch];
        j["from_scratch"] = {{"label", s.label}, {"time", statJson(s.time)}};
    }
    return j;
}

std::string statText(const GroupStatistic& s) {
    if (s.seconds) return timeText(s.seconds);
    return s.runs == 0 ? "-" : "not reached";
}

std::string spreadText(const GroupStatistic& s) {
    if (!s.min_seconds) return "-";
    std::string t = timeText(s.min_seconds) + " .. " + timeText(s.max_seconds);
    if (s.stddev_seconds) t += " (sd " + timeText(s.stddev_seconds) + ")";
    return t;
}

// The warm-start columns only when some run was warm-started.
void printRuns(const std::vector<RunTta>& runs) {
    const bool warm = std::any_of(runs.begin(), runs.end(), [](const RunTta& r) { return r.tta.pretraining.has_value(); });
    std::vector<std::string> header = {"ID", "NAME", "STATUS", "CLOCK", "DEVICES", "STEP", "TIME", "COST"};
    if (warm) header.insert(header.end(), {"WARM START FROM", "WITH PRE-TRAINING"});
    header.push_back("BEST");
    TextTable t(header);
    for (const RunTta& r : runs) {
        const auto& x = r.tta;
        std::vector<std::string> row = {std::to_string(r.row.id.value), r.row.name,
                                        std::string(profiler::runStatusName(r.row.status)), r.row.clock, r.row.devices,
                                        x.step ? std::to_string(*x.step) : "-", x.reached ? timeText(x.seconds) : "not reached",
                                        costText(x.seconds, x.cost)};
        if (warm) {
            const auto& p = x.pretraining;
            row.push_back(p ? "run " + std::to_string(p->source.value) +
                                  (p->step ? " @ step " + std::to_string(*p->step) : std::string())
                            : "-");
            row.push_back(withPretrainingText(x));
        }
        row.push_back(x.best_accuracy ? percentText(*x.best_accuracy) : "no evaluations");
        t.add(row);
    }
    t.print(stdout);
}

void printGroups(const std::vector<SeedGroup>& groups, const std::vector<RunTta>& runs) {
    const bool warm = std::any_of(groups.begin(), groups.end(), [](const SeedGroup& g) { return g.warm_started; });
    std::vector<std::string> header = {"GROUP", "DEVICES", "RUNS", "REACHED", "TIME", "SPREAD", "COST"};
    if (warm) header.insert(header.end(), {"WITH PRE-TRAINING", "FROM SCRATCH"});
    TextTable t(header);
    for (const SeedGroup& g : groups) {
        std::string counted = std::to_string(g.time.runs);
        if (g.time.dropped) counted += " (2 dropped)";
        if (g.pending) counted += " +" + std::to_string(g.pending) + " running";
        std::string pre = "-", scratch = "-";
        if (g.with_pretraining)
            pre = statText(*g.with_pretraining) + " / " + costText(g.with_pretraining->seconds, g.with_pretraining->cost);
        if (g.warm_started)
            scratch = g.from_scratch ? statText(groups[*g.from_scratch].time) + " / " +
                                           costText(groups[*g.from_scratch].time.seconds, groups[*g.from_scratch].time.cost) +
                                           " (" + groups[*g.from_scratch].label + ")"
                                     : "no such runs";
        std::vector<std::string> row = {g.label, runs[g.members.front()].row.devices, counted,
                                        std::to_string(g.time.reached), statText(g.time), spreadText(g.time),
                                        costText(g.time.seconds, g.time.cost)};
        if (warm) row.insert(row.end(), {pre, scratch});
        t.add(row);
    }
    t.print(stdout);
}

}  // namespace

int ttaCommand(const TtaArgs& args) {
    std::optional<profiler::TargetAccuracy> target;
    try {
        target = profiler::TargetAccuracy::parse(args.target);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "--target: %s\n", e.what());
        return kExitUsage;
    }
    if (const std::string problem = args.filter.problem(); !problem.empty()) {
        std::fprintf(stderr, "%s\n", problem.c_str());
        return kExitUsage;
    }
    int code = kExitOk;
    auto store = openExisting(args.db, code, /*emptyIsOk=*/true);
    if (!store) return code;
    try {
        const std::vector<RunTta> runs = profiler::readTimeToAccuracy(*store, args.filter.apply(store->listRuns()), *target);
        const std::vector<SeedGroup> groups = args.group_seeds ? profiler::groupBySeed(runs) : std::vector<SeedGroup>{};
        if (args.json) {
            json out = {{"target", target->fraction()}, {"runs", json::array()}};
            for (const RunTta& r : runs) out["runs"].push_back(runJson(r));
            if (args.group_seeds) {
                out["groups"] = json::array();
                for (const SeedGroup& g : groups) out["groups"].push_back(groupJson(g, groups, runs));
            }
            std::printf("%s\n", out.dump(2).c_str());
            return kExitOk;
        }
        if (runs.empty()) {
            std::printf("no runs match in %s\n", args.db.c_str());
            return kExitOk;
        }
        std::printf("time to %s test accuracy: training seconds on each run's clock up to the first evaluation at or "
                    "above it (evaluations not counted)\n\n",
                    percentText(target->fraction()).c_str());
        if (args.group_seeds) {
            printGroups(groups, runs);
            std::printf("\ngroups: runs that differ only by seed. TIME is the mean, with 5 runs or more after dropping "
                        "the fastest and the slowest (a run that never reached the target counts as slowest).\n");
        } else {
            printRuns(runs);
        }
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    }
    return kExitOk;
}

}  // namespace trainbench::cli
